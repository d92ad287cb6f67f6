// Readable names for mangled symbols: C++ (Itanium ABI, through the statically
// linked libstdc++'s abi::__cxa_demangle), Rust legacy (_ZN...17h<hash>E) and Rust
// v0 (_R...). Rust names read like rustc-demangle's output without hashes
// (its "{:#}" form, as rustfilt prints them): crate disambiguators and legacy
// hashes are dropped, and so are the type suffixes of integer constants
// (`foo::<3>`, not `foo::<3usize>`). A name that is not mangled, or fails to
// demangle, comes back unchanged.
#pragma once

#include <string>
#include <string_view>

namespace nmprof::symbols {

// Throws only std::bad_alloc.
std::string demangle(std::string_view name);

}  // namespace nmprof::symbols
