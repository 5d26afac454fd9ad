# Writes OUTPUT: a header holding each Lua file in SOURCES as
#   inline constexpr std::string_view <basename> = R"lua(...)lua";
# in namespace distlock::script::lua. Run with cmake -P at build time.
set(content "// Generated from src/script/lua/*.lua by cmake/embed_lua.cmake. Do not edit.\n")
string(APPEND content "#pragma once\n#include <string_view>\nnamespace distlock::script::lua {\n")
foreach(src IN LISTS SOURCES)
  get_filename_component(name ${src} NAME_WE)
  file(READ ${src} body)
  string(APPEND content "inline constexpr std::string_view ${name} = R\"lua(${body})lua\";\n")
endforeach()
string(APPEND content "}  // namespace distlock::script::lua\n")
file(WRITE ${OUTPUT}.tmp "${content}")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
