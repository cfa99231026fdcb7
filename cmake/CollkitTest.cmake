# collkit_add_mpi_test(NAME <name> NP <ranks> COMMAND <exe> [args...]
#                      [LABELS ...] [TIMEOUT s]
#                      [EXPECT_FAILURE <regex>... [EXPECT_ONCE <regex>]])
#
# Runs <exe> under mpirun with <ranks> ranks. With EXPECT_FAILURE the test
# passes only if the command exits non-zero AND its output matches every regex
# (cmake/expect_failure.cmake): how the suite proves that a broken input is
# caught *for the right reason*, not merely that something failed.
#
# The settings that let a test run on a small machine live here, not in
# anyone's global environment:
#   --oversubscribe            more ranks than cores
#   mpi_yield_when_idle 1      waiting ranks give the core back (busy polling
#                              ranks would otherwise starve each other)
#   btl self,vader             shared memory only: tests stay on this machine
#   OMPI_ALLOW_RUN_AS_ROOT*    CI runs as root
#   ASAN_OPTIONS               under SANITIZE, leak checking is off for MPI
#                              programs: Open MPI's plugins are unloaded at
#                              MPI_Finalize and their allocations show up as
#                              unattributable leaks. Overflows, use-after-free
#                              and UB are still caught; non-MPI tests keep LSan.
#                              allocator_may_return_null: the tests of "out of
#                              memory" paths ask for more than ASan's largest
#                              allocation and expect NULL, as without ASan.
set(COLLKIT_MPIRUN_FLAGS --oversubscribe --bind-to none
    --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none
    CACHE STRING "Extra mpirun flags used by the tests")
set(COLLKIT_MPI_TEST_ENV
    "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
#   TSAN_OPTIONS               under SANITIZE=thread: tests/tsan.supp (races
#                              seen through Open MPI's uninstrumented copies)
if(COLLKIT_SANITIZE STREQUAL "thread")
  set(COLLKIT_TSAN_ENV "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/tsan.supp second_deadlock_stack=1")
  list(APPEND COLLKIT_MPI_TEST_ENV "${COLLKIT_TSAN_ENV}")
elseif(COLLKIT_SANITIZE)
  list(APPEND COLLKIT_MPI_TEST_ENV "ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1")
endif()

# collkit_add_command_test(NAME CMD EXPECT_ONCE EXPECT_FAILURE...): the test runs
# CMD (a list); with EXPECT_FAILURE regexes it must fail and print each of them
# (cmake/expect_failure.cmake). Shared by the MPI launcher below and the SMPI
# one (tests/sim).
function(collkit_add_command_test name cmd expect_once)
  if(ARGN)
    string(REPLACE ";" "|" joined "${cmd}")
    set(defs "")
    set(i 0)
    foreach(re IN LISTS ARGN)
      list(APPEND defs "-DEXPECT_${i}=${re}")
      math(EXPR i "${i} + 1")
    endforeach()
    if(expect_once)
      list(APPEND defs "-DEXPECT_ONCE=${expect_once}")
    endif()
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} "-DCMD=${joined}" -DNEXPECT=${i} ${defs}
                     -P ${PROJECT_SOURCE_DIR}/cmake/expect_failure.cmake)
  else()
    add_test(NAME ${name} COMMAND ${cmd})
  endif()
endfunction()

function(collkit_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;NP;TIMEOUT;EXPECT_ONCE" "COMMAND;LABELS;EXPECT_FAILURE" ${ARGN})
  set(cmd ${MPIEXEC_EXECUTABLE} ${COLLKIT_MPIRUN_FLAGS} ${MPIEXEC_NUMPROC_FLAG} ${T_NP} ${T_COMMAND})
  collkit_add_command_test(${T_NAME} "${cmd}" "${T_EXPECT_ONCE}" ${T_EXPECT_FAILURE})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${COLLKIT_MPI_TEST_ENV}"
                       PROCESSORS 1 TIMEOUT ${T_TIMEOUT})
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
