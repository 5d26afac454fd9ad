# Writes, from each Lua file in SOURCES (run with cmake -P at build time):
# - OUTPUT: a header holding each file as
#     inline constexpr std::string_view <basename> = R"lua(...)lua";
#   in namespace distlock::script::lua;
# - LIST: an X-macro list, one DISTLOCK_SCRIPT(<basename>) line per file, that
#   src/script/scripts.hpp/.cpp expand into the Scripts members, their
#   initialisation and the preload list. A new script is its .lua file alone.
set(content "// Generated from src/script/lua/*.lua by cmake/embed_lua.cmake. Do not edit.\n")
string(APPEND content "#pragma once\n#include <string_view>\nnamespace distlock::script::lua {\n")
set(list "// Generated from src/script/lua/*.lua by cmake/embed_lua.cmake. Do not edit.\n")
string(APPEND list "// One DISTLOCK_SCRIPT(name) per Lua file; the includer defines the macro.\n")
foreach(src IN LISTS SOURCES)
  get_filename_component(name ${src} NAME_WE)
  if(NOT name MATCHES "^[a-z_][a-z0-9_]*$")
    message(FATAL_ERROR "${src}: a Lua script's file name must be a C++ identifier")
  endif()
  file(READ ${src} body)
  string(APPEND content "inline constexpr std::string_view ${name} = R\"lua(${body})lua\";\n")
  string(APPEND list "DISTLOCK_SCRIPT(${name})\n")
endforeach()
string(APPEND content "}  // namespace distlock::script::lua\n")

function(write_if_different path text)
  file(WRITE ${path}.tmp "${text}")
  file(COPY_FILE ${path}.tmp ${path} ONLY_IF_DIFFERENT)
  file(REMOVE ${path}.tmp)
endfunction()
write_if_different(${OUTPUT} "${content}")
write_if_different(${LIST} "${list}")
