# DISTLOCK_SANITIZE=asan builds everything with AddressSanitizer and
# UndefinedBehaviorSanitizer; =tsan with ThreadSanitizer. Applied globally so
# tests, the library and their support code agree.
if(DISTLOCK_SANITIZE STREQUAL "asan")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # Clang 14's -fsanitize=function cannot compile coroutine frames
    # ("Cannot represent a difference across sections").
    add_compile_options(-fno-sanitize=function)
  endif()
  add_link_options(-fsanitize=address,undefined)
elseif(DISTLOCK_SANITIZE STREQUAL "tsan")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT DISTLOCK_SANITIZE STREQUAL "")
  message(FATAL_ERROR "DISTLOCK_SANITIZE must be empty, asan or tsan (got '${DISTLOCK_SANITIZE}')")
endif()
