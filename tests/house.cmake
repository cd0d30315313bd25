# The house rules (tests/house/house.sh): room and function sizes, floors
# included only downwards, every src/**/*.c named in docs/ARCHITECTURE.md.
add_test(NAME house COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/house/house.sh ${CMAKE_SOURCE_DIR})
