# Warnings are PRIVATE to our own targets: they never leak to consumers.
function(distlock_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)
  if(DISTLOCK_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
