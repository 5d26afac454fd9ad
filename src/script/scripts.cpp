#include "script/scripts.hpp"

#include "distlock_lua_sources.hpp"

namespace distlock::script {

const Scripts& scripts() {
  static const Scripts all{
      make_script("acquire", lua::acquire),
      make_script("release", lua::release),
      make_script("renew", lua::renew),
      make_script("force_release", lua::force_release),
  };
  return all;
}

}  // namespace distlock::script
