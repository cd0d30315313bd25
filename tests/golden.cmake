# Golden expectations: each fixture's findings (line:col rule fix) compared
# exactly with its hand-written .expect. Fixtures listed in
# fixtures/KNOWN-DIFFERENCES are reviewed disagreements, checked separately
# so the list can only shrink (see that file).
file(GLOB_RECURSE PREEMPTIFY_FIXTURES ${CMAKE_SOURCE_DIR}/fixtures/drivers/*.c)
file(STRINGS ${CMAKE_SOURCE_DIR}/fixtures/KNOWN-DIFFERENCES _known REGEX "^fixtures/")
set(_agreed)
foreach(f ${PREEMPTIFY_FIXTURES})
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${f})
  list(FIND _known ${rel} _i)
  if(_i EQUAL -1)
    list(APPEND _agreed ${rel})
  endif()
endforeach()
add_test(NAME golden_fixtures COMMAND scan_dump --check ${_agreed}
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
add_test(NAME cli_scan_fixtures COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:preemptify>
  -DSRC=${CMAKE_SOURCE_DIR} -P ${CMAKE_SOURCE_DIR}/tests/scripts/cli_scan.cmake)
