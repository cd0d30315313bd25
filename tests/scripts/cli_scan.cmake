# End-to-end: the real binary on the fixture tree. Exit codes, and JSON and
# SARIF that parse and carry the required fields (checked with python3).
execute_process(COMMAND ${BIN} scan ${SRC}/fixtures/drivers RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "scan of fixtures: expected exit 1 (findings), got ${rc}: ${err}")
endif()
if(NOT out MATCHES ":[0-9]+:[0-9]+: (warning|error|note): .* \\[P00[1-8](, fixable)?\\]")
  message(FATAL_ERROR "text output not in compiler style:\n${out}")
endif()
# nothing to flag: its per-CPU array is only used with preemption off, so it is left as it is
execute_process(COMMAND ${BIN} scan ${SRC}/fixtures/drivers/misc/oprofile_clean.c RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clean fixture: expected exit 0, got ${rc}")
endif()
# --modernize converts that array all the same: its one finding is the P008 note
execute_process(COMMAND ${BIN} scan --modernize ${SRC}/fixtures/drivers/misc/oprofile_clean.c RESULT_VARIABLE rc
  OUTPUT_VARIABLE out ERROR_QUIET)
if(NOT rc EQUAL 1 OR NOT out MATCHES "note: 2.4 per-CPU array struct op_cpu_buf op_buf.NR_CPUS.: DEFINE_PER_CPU in 2.6 .P008, fixable.")
  message(FATAL_ERROR "clean fixture with --modernize: expected exit 1 with the P008 note, got ${rc}: ${out}")
endif()
execute_process(COMMAND ${BIN} scan --format nope x RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "bad --format: expected exit 2, got ${rc}")
endif()
execute_process(COMMAND ${BIN} scan ${SRC}/fixtures/drivers/misc/oprofile_clean.c /nonexistent/x.c
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET)
if(NOT rc EQUAL 3 OR NOT out MATCHES "/nonexistent/x.c")
  message(FATAL_ERROR "missing file: expected exit 3 naming the file, got ${rc}: ${out}")
endif()
foreach(fmt json sarif)
  execute_process(COMMAND ${BIN} scan --format ${fmt} ${SRC}/fixtures/drivers
    OUTPUT_FILE ${CMAKE_CURRENT_BINARY_DIR}/out.${fmt} ERROR_QUIET)
  execute_process(COMMAND python3 ${SRC}/scripts/validate-output.py ${fmt} ${CMAKE_CURRENT_BINARY_DIR}/out.${fmt}
    RESULT_VARIABLE rc OUTPUT_VARIABLE vout ERROR_VARIABLE verr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${fmt} output invalid: ${vout}${verr}")
  endif()
endforeach()
