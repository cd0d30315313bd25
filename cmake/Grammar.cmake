# Fetch the tree-sitter C grammar from npm, verify it, compile it.
#
# The package is never committed. `npm pack` downloads the tarball into the
# build tree; its SHA-256 must match the pin below or the build stops. To build
# offline, pass -DPREEMPTIFY_GRAMMAR_TARBALL=/path/to/tree-sitter-c-0.23.6.tgz.
set(GRAMMAR_PACKAGE tree-sitter-c)
set(GRAMMAR_VERSION 0.23.6)
set(GRAMMAR_SHA256 88175d4425037ec0026233a44f82064a676573b1fd748fc709ae607332151243)
set(PREEMPTIFY_GRAMMAR_TARBALL "" CACHE FILEPATH "Local copy of the npm tarball")

set(_gdir ${CMAKE_BINARY_DIR}/grammar)
set(_tgz ${_gdir}/${GRAMMAR_PACKAGE}-${GRAMMAR_VERSION}.tgz)
file(MAKE_DIRECTORY ${_gdir})

if(PREEMPTIFY_GRAMMAR_TARBALL)
  file(COPY_FILE ${PREEMPTIFY_GRAMMAR_TARBALL} ${_tgz})
elseif(NOT EXISTS ${_tgz})
  find_program(NPM npm)
  if(NOT NPM)
    message(FATAL_ERROR "npm not found: it is needed once to fetch ${GRAMMAR_PACKAGE}@${GRAMMAR_VERSION} "
      "(apt-get install npm, or pass -DPREEMPTIFY_GRAMMAR_TARBALL=...)")
  endif()
  message(STATUS "Fetching ${GRAMMAR_PACKAGE}@${GRAMMAR_VERSION} from npm")
  execute_process(COMMAND ${NPM} pack ${GRAMMAR_PACKAGE}@${GRAMMAR_VERSION} --silent
    WORKING_DIRECTORY ${_gdir} RESULT_VARIABLE _rc OUTPUT_QUIET)
  if(NOT _rc EQUAL 0 OR NOT EXISTS ${_tgz})
    message(FATAL_ERROR "npm pack ${GRAMMAR_PACKAGE}@${GRAMMAR_VERSION} failed (${_rc})")
  endif()
endif()

file(SHA256 ${_tgz} _sum)
if(NOT _sum STREQUAL GRAMMAR_SHA256)
  file(REMOVE ${_tgz})
  message(FATAL_ERROR "${_tgz}: SHA-256 ${_sum} does not match the pinned ${GRAMMAR_SHA256}")
endif()

if(NOT EXISTS ${_gdir}/package/src/parser.c)
  file(ARCHIVE_EXTRACT INPUT ${_tgz} DESTINATION ${_gdir} PATTERNS package/src)
endif()

add_library(tree_sitter_c STATIC ${_gdir}/package/src/parser.c)
target_include_directories(tree_sitter_c PRIVATE ${_gdir}/package/src)
# Third-party generated code: not ours to warn about, and never sanitised
# (UBSan on a 3.8 MB generated table costs minutes and finds nothing of ours).
target_compile_options(tree_sitter_c PRIVATE -w -O2 -fno-sanitize=all)
set_target_properties(tree_sitter_c PROPERTIES POSITION_INDEPENDENT_CODE ON)
