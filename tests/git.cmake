# The git stage: message unit tests, and end-to-end tests that judge
# repo_commit_changes()/repo_series() with the real git CLI (tests/git/*.sh,
# driven through the test_repo tool, or the preemptify binary itself;
# tests/git/lib.sh is their shared setup).
add_executable(test_repo ${CMAKE_CURRENT_SOURCE_DIR}/test_repo.c)
target_compile_options(test_repo PRIVATE ${PREEMPTIFY_WARNINGS})
target_link_libraries(test_repo PRIVATE preemptify_core)
add_test(NAME git_message_unit COMMAND test_repo unit)

file(GLOB PREEMPTIFY_GIT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/git/t*.sh)
foreach(t ${PREEMPTIFY_GIT_TESTS})
  get_filename_component(name ${t} NAME_WE)
  add_test(NAME git_${name} COMMAND bash ${t})
  set_tests_properties(git_${name} PROPERTIES
    ENVIRONMENT "TEST_REPO=$<TARGET_FILE:test_repo>;PREEMPTIFY=$<TARGET_FILE:preemptify>;GIT_TEST_LIB=${CMAKE_CURRENT_SOURCE_DIR}/git/lib.sh"
    SKIP_RETURN_CODE 77)
endforeach()
