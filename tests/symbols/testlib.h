// The functions of the symbolizer's test library, which the tests look up by
// address. Names and expected demangled forms are in symbol_table_test.cpp.
#pragma once

enum TestlibFunction {
  kCGlobal,            // c_global_function
  kCStatic,            // c_static_function (static)
  kWeakAlias,          // testlib_entry, weak alias of global __testlib_impl
  kLocalAlias,         // zzz_exported_target, with a local alias aaa_local_alias
  kVersioned,          // __new_name@@TESTLIB_2, alias of old_name@TESTLIB_1
  kCxxMember,          // geometry::Vec2::length() const
  kCxxOperator,        // geometry::operator+
  kCxxFunctionTemplate,  // geometry::twice<int>
  kCxxClassTemplate,   // geometry::Box<long>::unwrap
  kCxxStatic,          // file_local (static)
  kCxxAnonymous,       // (anonymous namespace)::anonymous_helper
  kTestlibFunctionCount
};

#ifdef __cplusplus
extern "C" {
#endif
// The entry address of a TestlibFunction.
const void* testlib_function(int which);
// The C half of testlib_function.
const void* testlib_c_function(int which);
#ifdef __cplusplus
}
#endif
