// The two Rust demanglers behind demangle(). Each reads the mangled name at the
// start of `symbol` and returns its readable form and the length it used, or
// nothing if `symbol` does not start with a well-formed name of its scheme.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nmprof::symbols {

struct RustName {
  std::string readable;
  size_t mangled_length;
};

// _ZN<len><element>...17h<16 hex digits>E
std::optional<RustName> demangle_rust_legacy(std::string_view symbol);
// _R<path>[<instantiating crate>], RFC 2603
std::optional<RustName> demangle_rust_v0(std::string_view symbol);

}  // namespace nmprof::symbols
