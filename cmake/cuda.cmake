# cuda.cmake — the optional GPU part of the build: CUDA Toolkit and NCCL.
#
#   COLLKIT_CUDA=AUTO (default)  use CUDA when the toolkit is found, else build host-only
#   COLLKIT_CUDA=ON              require it: configure fails when it is missing
#   COLLKIT_CUDA=OFF             never use it
#
# Sets COLLKIT_HAVE_CUDA and COLLKIT_HAVE_NCCL (TRUE/FALSE) for the rest of the
# build; collectives/CMakeLists.txt turns them into compile definitions on `collkit`.
# The GPU code compiles and links wherever the toolkit is installed, with or
# without a GPU: the GPU tests decide at run time whether to skip.

set(COLLKIT_CUDA AUTO CACHE STRING "Build the CUDA IPC transport and GPU algorithms: AUTO, ON or OFF")
set_property(CACHE COLLKIT_CUDA PROPERTY STRINGS AUTO ON OFF)
string(TOUPPER "${COLLKIT_CUDA}" _ck_cuda_mode)
if(NOT _ck_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "COLLKIT_CUDA must be AUTO, ON or OFF (got '${COLLKIT_CUDA}')")
endif()

set(COLLKIT_HAVE_CUDA FALSE)
set(COLLKIT_HAVE_NCCL FALSE)

if(_ck_cuda_mode STREQUAL "OFF")
  message(STATUS "collkit: CUDA disabled (COLLKIT_CUDA=OFF): host transport only")
  return()
endif()

# nvcc is often not on PATH; the toolkit's usual home is a good hint.
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
if(NOT CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT} AND EXISTS /usr/local/cuda)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
find_package(CUDAToolkit QUIET)
include(CheckLanguage)
check_language(CUDA)

if(NOT CUDAToolkit_FOUND OR NOT CMAKE_CUDA_COMPILER)
  if(_ck_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "collkit: COLLKIT_CUDA=ON but no CUDA Toolkit/nvcc was found "
                        "(set CUDAToolkit_ROOT or CMAKE_CUDA_COMPILER)")
  endif()
  message(STATUS "collkit: CUDA Toolkit not found: building the host transport only "
                 "(GPU transport, oneshot/twoshot and nccl are left out)")
  return()
endif()

# Architectures: Ampere (sm_80) and Hopper (sm_90) machine code. Two targets
# keep nvcc time modest; override with -DCMAKE_CUDA_ARCHITECTURES=... (e.g.
# "native" on a GPU machine). Must be set before enable_language: CMake's own
# default is older than what recent nvcc accepts.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 80 90)
endif()
enable_language(CUDA)
set(COLLKIT_HAVE_CUDA TRUE)
# Programs that link libcollkit stay C programs linked by gcc (with -lcudart):
# the kernels need no device link step (no separable compilation), and the
# sanitizer/link flags of the top level are gcc flags.
set(CMAKE_CUDA_LINKER_PREFERENCE_PROPAGATES 0)
set(CMAKE_CUDA_LINKER_PREFERENCE 0)

# The top-level -Wall/-Wextra (and sanitizer flags) are gcc options: nvcc
# rejects them. Keep them for C, and hand the warnings to nvcc's host compiler.
get_directory_property(_ck_opts COMPILE_OPTIONS)
set(_ck_new_opts)
foreach(_o IN LISTS _ck_opts)
  list(APPEND _ck_new_opts "$<$<COMPILE_LANGUAGE:C>:${_o}>")
endforeach()
set_directory_properties(PROPERTIES COMPILE_OPTIONS "${_ck_new_opts}")
add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>")
foreach(_m IN LISTS COLLKIT_PREFIX_MAP)   # the top level's path mapping, for nvcc's host compiler too
  add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_m}>")
endforeach()
if(COLLKIT_WERROR)
  add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>")
endif()

# NCCL: found by header and library (it ships no CMake package).
find_path(COLLKIT_NCCL_INCLUDE_DIR nccl.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include ENV NCCL_HOME
          PATH_SUFFIXES include)
# NAMES: the pip wheel (nvidia-nccl-cu12/13) ships libnccl.so.2 only.
find_library(COLLKIT_NCCL_LIBRARY NAMES nccl libnccl.so.2
             HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64 /usr/local/cuda/lib ENV NCCL_HOME
             PATH_SUFFIXES lib lib64)
if(COLLKIT_NCCL_INCLUDE_DIR AND COLLKIT_NCCL_LIBRARY)
  set(COLLKIT_HAVE_NCCL TRUE)
  file(STRINGS ${COLLKIT_NCCL_INCLUDE_DIR}/nccl.h _ck_nccl_ver REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*" "\\1.\\2.\\3"
         _ck_nccl_ver "${_ck_nccl_ver}")
  message(STATUS "collkit: CUDA ${CUDAToolkit_VERSION} (architectures ${CMAKE_CUDA_ARCHITECTURES}), "
                 "NCCL ${_ck_nccl_ver} (${COLLKIT_NCCL_LIBRARY})")
else()
  message(STATUS "collkit: CUDA ${CUDAToolkit_VERSION} (architectures ${CMAKE_CUDA_ARCHITECTURES}); "
                 "NCCL not found: the 'nccl' reference algorithm is left out")
endif()
