# smpi.cmake — the simulated build: collkit compiled with SimGrid's smpicc and
# run by smpirun on a simulated platform (sim/platforms/, sim/README.md).
#
#   cmake -S . -B build-smpi -DCOLLKIT_SMPI=ON            picks smpicc itself
#   cmake -S . -B build-smpi -DCMAKE_C_COMPILER=smpicc    the same: the option follows the compiler
#
# Always in a build folder of its own (make sim-bench uses build-smpi/): the
# compiler of a folder cannot change once configured, and every program built
# here is a shared object that only smpirun can start.
#
# What differs from the normal build:
#   - smpicc provides mpi.h and the MPI library: MPI::MPI_C is an empty
#     stand-in and MPIEXEC_EXECUTABLE is smpirun;
#   - COLLKIT_SMPI is defined for every source (the few SMPI lines in
#     collectives/src and trainer/);
#   - CUDA, the labs, collkit-cc and the normal test suite are off (the suite
#     runs mpirun, needs threads for the async engine, or a GPU); the sim tests
#     (tests/sim, label sim) are what ctest runs here.
#
# Sets COLLKIT_SMPI (ON/OFF) and, when ON, COLLKIT_SMPIRUN.

get_filename_component(_ck_cc_name "${CMAKE_C_COMPILER}" NAME)
if(_ck_cc_name MATCHES "^smpicc")
  set(COLLKIT_SMPI ON CACHE BOOL "Build for SimGrid SMPI" FORCE)
elseif(COLLKIT_SMPI)
  message(FATAL_ERROR
    "COLLKIT_SMPI=ON, but this folder's compiler is ${CMAKE_C_COMPILER}, not smpicc "
    "(SimGrid not installed, or the folder was configured before). Use a new folder:\n"
    "  cmake -S . -B build-smpi -DCOLLKIT_SMPI=ON\n"
    "SimGrid: apt-get install libsimgrid-dev (or: make sim-bench, which installs it).")
endif()

if(NOT COLLKIT_SMPI)
  return()
endif()

get_filename_component(_ck_sg_bin "${CMAKE_C_COMPILER}" DIRECTORY)
find_program(COLLKIT_SMPIRUN smpirun HINTS ${_ck_sg_bin} REQUIRED)
set(MPIEXEC_EXECUTABLE ${COLLKIT_SMPIRUN})
set(MPIEXEC_NUMPROC_FLAG -np)

# smpicc compiles against SimGrid's mpi.h and links libsimgrid itself.
add_library(MPI::MPI_C INTERFACE IMPORTED)
add_compile_definitions(COLLKIT_SMPI)
set(COLLKIT_HAVE_CUDA FALSE)
set(COLLKIT_HAVE_NCCL FALSE)
message(STATUS "collkit: SimGrid SMPI build (${CMAKE_C_COMPILER}); run the programs with ${COLLKIT_SMPIRUN}")
