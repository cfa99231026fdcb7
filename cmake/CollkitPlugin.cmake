# collkit_add_plugin(NAME <program> SOURCES <file.c>...)
#
# Builds algorithm files written outside the library (a student's my_ring.c,
# a test's) into one program that is collcheck, collbench and tagtrain at
# once (and colldraw):  <program> check|bench|train|draw|list [ARGS]; and lab 06's crash harness
# for a file that registers a saver instead (CK_REGISTER_SAVER): save.  Each file registers its
# algorithm with a CK_REGISTER_ALGO(descriptor) line and includes
# collkit_algo.h only; it has no main. Used by the tests and labs in this
# tree, and by collkit-cc (a generated project that imports this build's
# targets) for files anywhere.
function(collkit_add_plugin)
  cmake_parse_arguments(P "" "NAME" "SOURCES" ${ARGN})
  if(NOT P_NAME OR NOT P_SOURCES)
    message(FATAL_ERROR "collkit_add_plugin: NAME and SOURCES are required")
  endif()
  add_executable(${P_NAME} ${P_SOURCES} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../plugin/main.c
                 ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../plugin/save.c
                 ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../plugin/confine.c)
  target_link_libraries(${P_NAME} PRIVATE collkit_check collbench_lib tagtrain_lib colldraw_lib)
  # Lab 06's crash harness (plugin/save.c) traces the saver at the system-call
  # level: nothing is wrapped at link time.
  # The algorithm files are linked as objects, so their CK_REGISTER_ALGO
  # constructors run before main.
endfunction()
