# The hierarchical all-reduce and the node layout (collectives/algos/hier.c,
# collectives/src/topo.c, transport_mixed.c), included by CMakeLists.txt:
#   colls.hier.matrix        hier_matrix.sh quick: hier and two compositions through
#                            collcheck at p = 1..6 on emulated nodes of 1, 2, 3 ranks,
#                            mpi and shm/mixed transports (10 runs, about 8 s)
#   colls.hier.matrix_full   the same, every k dividing p on both (22 runs; colls-full)
#   colls.hier.fallback      --transport shm --algo oneshot,twoshot on 2 emulated nodes:
#                            they run as ring, and the checker passes them
#   colls.hier.catches_shard a broken copy of hier (broken_hier.c) must fail at 2 x 2
#   colls.hier.control       ... and hier itself pass in that same program
#   colls.hier.bad_k         COLLKIT_RANKS_PER_NODE that does not divide p: refused, named
#   colls.hier.topo          the layout arithmetic (round-robin, uneven), hier's counts and names
set(_hier_launch ${MPIEXEC_EXECUTABLE} ${COLLKIT_MPIRUN_FLAGS})
foreach(_mode quick full)
  set(_name colls.hier.matrix)
  set(_label colls)
  if(_mode STREQUAL "full")
    set(_name colls.hier.matrix_full)
    set(_label colls-full)
  endif()
  add_test(NAME ${_name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/hier_matrix.sh ${_mode} $<TARGET_FILE:collcheck>
                                 $<TARGET_FILE:collverify> ${_hier_launch})
  set_tests_properties(${_name} PROPERTIES ENVIRONMENT "${COLLKIT_MPI_TEST_ENV}" PROCESSORS 1 TIMEOUT 300
                       LABELS ${_label})
endforeach()

collkit_add_mpi_test(NAME colls.hier.fallback NP 4 TIMEOUT 120 LABELS colls
                     COMMAND $<TARGET_FILE:collcheck> --algo oneshot,twoshot --transport shm --quick)
set_property(TEST colls.hier.fallback APPEND PROPERTY ENVIRONMENT "COLLKIT_RANKS_PER_NODE=2")
set_tests_properties(colls.hier.fallback PROPERTIES PASS_REGULAR_EXPRESSION
  "mixed transport.*oneshot needs every rank on one node.*it runs as ring.*\n[1-9][0-9]* passed, 0 failed\n")

add_executable(collcheck_broken_hier broken_hier.c)
target_link_libraries(collcheck_broken_hier PRIVATE collkit_check)
collkit_add_mpi_test(NAME colls.hier.catches_shard NP 4 TIMEOUT 120 LABELS colls
                     COMMAND $<TARGET_FILE:collcheck_broken_hier> --algo broken_hier_shard --count 5,1021
                             --dtype f64 --op sum --transport shm
                     EXPECT_FAILURE "broken_hier_shard n=5 .*FAIL" "\n[0-9]+ passed, [1-9][0-9]* failed\n")
collkit_add_mpi_test(NAME colls.hier.control NP 4 TIMEOUT 120 LABELS colls
                     COMMAND $<TARGET_FILE:collcheck_broken_hier> --algo hier --count 5,1021 --dtype f64 --op sum
                             --transport shm)
set_property(TEST colls.hier.catches_shard colls.hier.control APPEND PROPERTY ENVIRONMENT "COLLKIT_RANKS_PER_NODE=2")
set_tests_properties(colls.hier.control PROPERTIES PASS_REGULAR_EXPRESSION "\n[1-9][0-9]* passed, 0 failed\n")

collkit_add_mpi_test(NAME colls.hier.bad_k NP 4 TIMEOUT 60 LABELS colls
                     COMMAND $<TARGET_FILE:collcheck> --algo hier --count 5
                     EXPECT_FAILURE "COLLKIT_RANKS_PER_NODE=3 does not divide the job's 4 ranks")
set_property(TEST colls.hier.bad_k APPEND PROPERTY ENVIRONMENT "COLLKIT_RANKS_PER_NODE=3")

# The layout's arithmetic and hier's counts and names, without MPI (test_topo.c).
add_executable(test_topo test_topo.c)
target_link_libraries(test_topo PRIVATE collkit_check)
add_test(NAME colls.hier.topo COMMAND test_topo)
set_tests_properties(colls.hier.topo PROPERTIES TIMEOUT 60 LABELS colls)
