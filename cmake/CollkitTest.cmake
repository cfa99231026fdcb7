# collkit_add_mpi_test(NAME <name> NP <ranks> COMMAND <exe> [args...] [LABELS ...])
#
# Runs <exe> under mpirun with <ranks> ranks. The settings that let a test run
# on a small machine live here, not in anyone's global environment:
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
set(COLLKIT_MPIRUN_FLAGS --oversubscribe --bind-to none
    --mca mpi_yield_when_idle 1 --mca btl self,vader --mca btl_vader_single_copy_mechanism none
    CACHE STRING "Extra mpirun flags used by the tests")

function(collkit_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;NP;TIMEOUT;WILL_FAIL_REGEX" "COMMAND;LABELS;PASS_REGEX" ${ARGN})
  add_test(NAME ${T_NAME}
           COMMAND ${MPIEXEC_EXECUTABLE} ${COLLKIT_MPIRUN_FLAGS} ${MPIEXEC_NUMPROC_FLAG} ${T_NP} ${T_COMMAND})
  set_tests_properties(${T_NAME} PROPERTIES
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;ASAN_OPTIONS=detect_leaks=0"
    PROCESSORS 1)
  if(T_TIMEOUT)
    set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT})
  else()
    set_tests_properties(${T_NAME} PROPERTIES TIMEOUT 300)
  endif()
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
  if(T_PASS_REGEX)
    set_tests_properties(${T_NAME} PROPERTIES PASS_REGULAR_EXPRESSION "${T_PASS_REGEX}")
  endif()
endfunction()
