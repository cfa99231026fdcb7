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
  # The files are compiled once: the program links them, and so does
  # NAME.algo, the program they run in when the grader isolates them.
  add_library(${P_NAME}.student OBJECT ${P_SOURCES})
  target_link_libraries(${P_NAME}.student PRIVATE collkit_check collbench_lib tagtrain_lib colldraw_lib)
  set(_plugin ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../plugin)
  add_executable(${P_NAME} $<TARGET_OBJECTS:${P_NAME}.student> ${_plugin}/main.c ${_plugin}/save.c
                 ${_plugin}/confine.c ${_plugin}/isolate_host.c)
  target_link_libraries(${P_NAME} PRIVATE collkit_check collbench_lib tagtrain_lib colldraw_lib)
  # Lab 06's crash harness (plugin/save.c) traces the saver at the system-call
  # level: nothing is wrapped at link time.
  # The algorithm files are linked as objects, so their CK_REGISTER_ALGO
  # constructors run before main.
  if(TARGET collkit_host)
    set(_host $<TARGET_FILE:collkit_host>)      # this tree's
  elseif(COLLKIT_HOST_EXE AND EXISTS "${COLLKIT_HOST_EXE}")
    set(_host ${COLLKIT_HOST_EXE})              # collkit-cc's: the build's or the kit's bin/
  endif()
  if(_host AND TARGET collkit_isolate_rt)
    # COLLKIT_ISOLATE=1 (plugin/isolate_host.c): the files alone with the
    # minimal runtime of collkit_algo.h. A name the runtime lacks (MPI, CUDA:
    # what the grader's integrity part voids anyway) stays unresolved rather
    # than failing a build the program itself passed; called, it crashes
    # that process only.
    add_executable(${P_NAME}.algo $<TARGET_OBJECTS:${P_NAME}.student>)
    target_link_libraries(${P_NAME}.algo PRIVATE collkit_isolate_rt)
    target_link_options(${P_NAME}.algo PRIVATE -no-pie LINKER:--unresolved-symbols=ignore-all)
    set_target_properties(${P_NAME}.algo PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/isolated)
    # Where the program finds both when it hands over: a source of its own
    # (no path in its compile flags).
    set(_paths ${CMAKE_CURRENT_BINARY_DIR}/${P_NAME}.isolate_paths.c)
    file(GENERATE OUTPUT ${_paths} CONTENT
         "const char plugin_host_exe[] = \"${_host}\";\nconst char plugin_algo_exe[] = \"$<TARGET_FILE:${P_NAME}.algo>\";\n")
    target_sources(${P_NAME} PRIVATE ${_paths})
    target_compile_definitions(${P_NAME} PRIVATE COLLKIT_PLUGIN_ISOLATE)
    add_dependencies(${P_NAME} ${P_NAME}.algo)
    if(TARGET collkit_host)
      add_dependencies(${P_NAME} collkit_host)
    endif()
  endif()
endfunction()
