# build.cmake — the sim tests' fixture in the normal build: configure and build
# the simulated programs (cmake/smpi.cmake) in a folder of their own.
#   cmake -DSRC=<source> -DBIN=<folder> -DCC=<smpicc> [-DWERROR=ON] -P build.cmake
if(NOT EXISTS ${BIN}/CMakeCache.txt)
  set(werror OFF)
  if(WERROR)
    set(werror ON)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN} -DCOLLKIT_SMPI=ON
                          -DCMAKE_C_COMPILER=${CC} -DCOLLKIT_WERROR=${werror}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(REMOVE ${BIN}/CMakeCache.txt)
    message(FATAL_ERROR "configuring the simulated build in ${BIN} failed")
  endif()
endif()
cmake_host_system_information(RESULT ncpu QUERY NUMBER_OF_LOGICAL_CORES)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BIN} -j ${ncpu}
                        --target collcheck collbench sim_collcheck_broken tagtrain
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the simulated programs in ${BIN} failed")
endif()
