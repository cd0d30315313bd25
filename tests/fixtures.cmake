# Fixture corpus: every synthetic 2.4 driver compiles against the 2.4 shim
# headers, and every fixture has a well-formed .expect file.
add_test(NAME fixtures_compile_24
  COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/check-fixtures-compile.sh
          ${CMAKE_SOURCE_DIR}/fixtures/drivers ${CMAKE_SOURCE_DIR}/fixtures/include-2.4)
add_test(NAME fixtures_expect_format
  COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/check-expect-format.sh
          ${CMAKE_SOURCE_DIR}/fixtures/drivers)
# The 2.6 shim must build the 2.6-only constructs the rewrite introduces.
add_test(NAME fixtures_shim_26
  COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/check-fixtures-compile.sh
          ${CMAKE_SOURCE_DIR}/fixtures/shim-tests/2.6 ${CMAKE_SOURCE_DIR}/fixtures/include-2.6
          ${CMAKE_SOURCE_DIR}/fixtures/include-2.4)
# ...and must reject 2.4-only preemption constructs (current->need_resched).
add_test(NAME fixtures_shim_26_rejects_24
  COMMAND bash ${CMAKE_SOURCE_DIR}/scripts/check-fixtures-compile.sh
          ${CMAKE_SOURCE_DIR}/fixtures/shim-tests/2.6-reject ${CMAKE_SOURCE_DIR}/fixtures/include-2.6
          ${CMAKE_SOURCE_DIR}/fixtures/include-2.4)
set_tests_properties(fixtures_shim_26_rejects_24 PROPERTIES WILL_FAIL TRUE)
