// The one compiled copy of Asio (ASIO_SEPARATE_COMPILATION): every other file
// includes Asio's headers only, which keeps the build fast on small machines.
#include <asio/impl/src.hpp>
#include <asio/ssl/impl/src.hpp>
