// Demangling vectors. The Rust symbols are real: rustc 1.95 and nightly 1.97
// output (-C symbol-mangling-version=v0 and legacy) for small programs that use
// closures, trait objects, fn pointers, const generics and non-ASCII names,
// listed with nm. Expected strings are rustfilt 0.2.1's (rustc-demangle 0.1.21,
// Debian package rustfilt) and c++filt's (binutils 2.40) output for the same
// symbols; the few hand-made cases say where their expectation comes from.
#include "formats/mangling/demangle.h"

#include <gtest/gtest.h>

#include <random>

namespace nmprof::symbols {
namespace {

struct Vector {
  const char* mangled;
  const char* readable;
};

void expect_demangles(const Vector& vector) { EXPECT_EQ(demangle(vector.mangled), vector.readable) << vector.mangled; }

TEST(Demangle, Cxx) {
  constexpr Vector kVectors[] = {
      {"_ZNK8geometry4Vec26lengthEv", "geometry::Vec2::length() const"},
      {"_ZN8geometryplERKNS_4Vec2ES2_", "geometry::operator+(geometry::Vec2 const&, geometry::Vec2 const&)"},
      {"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)"},
      {"_ZNK3foo3barIiEclEv", "foo::bar<int>::operator()() const"},
      {"_ZN2js4callIJidEEEvDpT_", "void js::call<int, double>(int, double)"},
      {"_ZZ4mainENKUlvE_clEv", "main::{lambda()#1}::operator()() const"},
      {"_ZThn8_N3Foo3barEv", "non-virtual thunk to Foo::bar()"},
      {"_ZdlPvm", "operator delete(void*, unsigned long)"},
      {"_ZN2os6mallocEm8MEMFLAGS", "os::malloc(unsigned long, MEMFLAGS)"},
      {"_ZN6Thread3runEv.cold", "Thread::run() [clone .cold]"},
      {"_ZL10file_locali.constprop.0", "file_local(int) [clone .constprop.0]"},
      {"_ZN3foo3barE", "foo::bar"},  // no Rust hash: C++
  };
  for (const Vector& vector : kVectors) expect_demangles(vector);
}

TEST(Demangle, RustLegacy) {
  constexpr Vector kVectors[] = {
      {"_ZN3big4main17h3884c89f8cf93024E", "big::main"},
      {"_ZN3big4main28_$u7b$$u7b$closure$u7d$$u7d$17h236151bd157d7b76E", "big::main::{{closure}}"},
      {"_ZN3big4main28_$u7b$$u7b$closure$u7d$$u7d$28_$u7b$$u7b$closure$u7d$$u7d$17he031b1336b7fed28E",
       "big::main::{{closure}}::{{closure}}"},
      {"_ZN3big20Wrapper$LT$T$C$_$GT$4show17h495dfd9f8ac7d4e1E", "big::Wrapper<T,_>::show"},
      {"_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17hbe447098641a8023E", "<&T as core::fmt::Debug>::fmt"},
      {"_ZN102_$LT$core..iter..adapters..map..Map$LT$I$C$F$GT$$u20$as$u20$core..iter..traits..iterator.."
       "Iterator$GT$4fold17ha7efe72880cb39beE",
       "<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::fold"},
      {"_ZN3big15_$u6771$$u4eac$13gr$ufc$$udf$e17h14ad8f6b81d9e0bcE", "big::東京::grüße"},
      // LLVM's suffix goes, as rustc-demangle drops it.
      {"_ZN4test3foo17h0123456789abcdefE.llvm.5F2A", "test::foo"},
      // $SP$ $BP$ $LP$ $RP$ per rustc's legacy.rs escapes; rustfilt agrees.
      {"_ZN4test16$SP$$BP$$LP$$RP$17h0123456789abcdefE", "test::@*()"},
  };
  for (const Vector& vector : kVectors) expect_demangles(vector);
}

TEST(Demangle, RustV0Paths) {
  constexpr Vector kVectors[] = {
      {"_RNvCsl0gHu2WDNTj_3big4main", "big::main"},
      {"_RNCNvCsl0gHu2WDNTj_3big4main0B3_", "big::main::{closure#0}"},
      {"_RNCNCNCNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal00s_0B9_",
       "std::rt::lang_start_internal::{closure#0}::{closure#0}::{closure#1}"},
      {"_RNvXCsl0gHu2WDNTj_3bigNtB2_6CircleNtB2_5Shape4area", "<big::Circle as big::Shape>::area"},
      {"_RNvMs_Csl0gHu2WDNTj_3bigINtB4_7WrapperhKj3_E4showB4_", "<big::Wrapper<u8, 3>>::show"},
      {"_RNvMs_Csl0gHu2WDNTj_3bigINtB4_7WrapperTscEKj2_E4showB4_", "<big::Wrapper<(i16, char), 2>>::show"},
      {"_RNSNvYNvCsl0gHu2WDNTj_3big5neverINtNtNtCsgEmfK2I1SDS_4core3ops8function6FnOnceTRSxEE9call_once6vtableB6_",
       "<big::never as core::ops::function::FnOnce<(&[i64],)>>::call_once::{shim:vtable#0}"},
      {"_RNCINvMs0_NtNtCsjrHSEGnQ3l9_3std4sync4onceNtB8_4Once9call_onceNCNvNtBc_2rt7cleanup0E0Bc_",
       "<std::sync::once::Once>::call_once::<std::rt::cleanup::{closure#0}>::{closure#0}"},
      {"_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace26___rust_end_short_backtraceNCINvNtB6_9panicking11begin_panicReE0zEB6_",
       "std::sys::backtrace::__rust_end_short_backtrace::<std::panicking::begin_panic<&str>::{closure#0}, !>"},
      {"_RNvNtCsl0gHu2WDNTj_3bigu7_1lqs71du9gre_6ka8l", "big::東京::grüße"},
      {"_RNvMNtCsl0gHu2WDNTj_3bigu7_1lqs71dNtB2_u13ncd_ska2e7a2cu8nave_6pa", "<big::東京::Ünïcödé>::naïve"},
      {"_RNvNtNtNtNtNtCsjrHSEGnQ3l9_3std3sys3pal4unix14stack_overflow3imp13MAIN_ALTSTACK.0",
       "std::sys::pal::unix::stack_overflow::imp::MAIN_ALTSTACK.0"},
      {"_RNvC4test3foo.llvm.123ABC", "test::foo"},
      {"_RNvC4test3foo.cold", "test::foo.cold"},
      {"_RNvC4testu8abc_9999", "test::punycode{abc-9999}"},  // not valid punycode: shown encoded
      {"_RNvC0_3foo", "::foo"},                              // an empty crate name prints as nothing
  };
  for (const Vector& vector : kVectors) expect_demangles(vector);
}

TEST(Demangle, RustV0Types) {
  constexpr Vector kVectors[] = {
      {"_RINvCsl0gHu2WDNTj_3big7genericThAtj3_RSmReuENCNvB2_4mains_0EB2_",
       "big::generic::<(u8, [u16; 3], &[u32], &str, ()), big::main::{closure#1}>"},
      {"_RINvCsl0gHu2WDNTj_3big7genericINtNtCsgEmfK2I1SDS_4core6option6OptionPhEoEB2_",
       "big::generic::<core::option::Option<*const u8>, u128>"},
      {"_RINvCsgskYLKf3nOe_4more1gOxEB2_", "more::g::<*mut i64>"},
      {"_RINvCsgskYLKf3nOe_4more1gRShEB2_", "more::g::<&[u8]>"},
      {"_RINvCsgskYLKf3nOe_4more1gFG_RL0_hERL0_hEB2_", "more::g::<for<'a> fn(&'a u8) -> &'a u8>"},
      {"_RINvCsgskYLKf3nOe_4more1gFKClEuEB2_", "more::g::<extern \"C\" fn(i32)>"},
      {"_RINvCsgskYLKf3nOe_4more1gFK6systemEuEB2_", "more::g::<extern \"system\" fn()>"},
      {"_RINvCsgskYLKf3nOe_4more1gFUKCPhvEuEB2_", "more::g::<unsafe extern \"C\" fn(*const u8, ...)>"},
      {"_RINvC4test3fooFG0_RL1_hRL0_tEuE", "test::foo::<for<'a, 'b> fn(&'a u8, &'b u16)>"},
      {"_RINvCsgskYLKf3nOe_4more1gRDG_INtNtNtCs8NwYtU1Mohg_4core3ops8function2FnTRL0_eEEp6OutputRL0_eEL_EB2_",
       "more::g::<&dyn for<'a> core::ops::function::Fn<(&'a str,), Output = &'a str>>"},
      {"_RINvNtCsgEmfK2I1SDS_4core3mem11size_of_valDNtNtNtNtB4_4iter6traits8iterator8Iteratorp4ItemThReEEL_"
       "ECsl0gHu2WDNTj_3big",
       "core::mem::size_of_val::<dyn core::iter::traits::iterator::Iterator<Item = (u8, &str)>>"},
      {"_RINvCsgskYLKf3nOe_4more1gINtNtCsbEht8wFNRx7_5alloc5boxed3BoxDNtNtCs8NwYtU1Mohg_4core3any3AnyNtNtB11_"
       "6marker4SendEL_EEB2_",
       "more::g::<alloc::boxed::Box<dyn core::any::Any + core::marker::Send>>"},
      {"_RINvCsgskYLKf3nOe_4more1gINtNtNtNtCsi4IsKQVxMg0_3std11collections4hash3map7HashMapNtNtCsbEht8wFNRx7_"
       "5alloc6string6StringINtNtB1m_3vec3VecTafEEEEB2_",
       "more::g::<std::collections::hash::map::HashMap<alloc::string::String, alloc::vec::Vec<(i8, f32)>>>"},
  };
  for (const Vector& vector : kVectors) expect_demangles(vector);
}

TEST(Demangle, RustV0Constants) {
  constexpr Vector kVectors[] = {
      {"_RINvCsl0gHu2WDNTj_3big5konstKb1_Kc78_Kln5_EB2_", "big::konst::<true, 'x', -5>"},
      {"_RINvCsl0gHu2WDNTj_3big5konstKb0_Kc1f600_Kl0_EB2_", "big::konst::<false, '😀', 0>"},
      {"_RINvCsgskYLKf3nOe_4more3bigKo123456789abcdef01122334455667788_EB2_",
       "more::big::<0x123456789abcdef01122334455667788>"},
      {"_RINvCsgskYLKf3nOe_4more1aKAt1_t2_t3_EEB2_", "more::a::<{[1, 2, 3]}>"},
      {"_RINvCsgskYLKf3nOe_4more3tupKTh4_c22_EEB2_", "more::tup::<{(4, '\"')}>"},
      {"_RINvCsgskYLKf3nOe_4more1pKVNtB2_1PS1xh1_1ysn2_EEB2_", "more::p::<{more::P { x: 1, y: -2 }}>"},
      {"_RINvCsgskYLKf3nOe_4more1tKVNtB2_2T2Th3_b1_EEB2_", "more::t::<{more::T2(3, true)}>"},
      {"_RINvCsgskYLKf3nOe_4more1eKVNtNtB2_1E1AUEB2_", "more::e::<{more::E::A}>"},
      {"_RINvCsgskYLKf3nOe_4more1eKVNtNtB2_1E1BTm5_EEB2_", "more::e::<{more::E::B(5)}>"},
      {"_RINvCsgskYLKf3nOe_4more1eKVNtNtB2_1E1CS1zc71_EEB2_", "more::e::<{more::E::C { z: 'q' }}>"},
      {"_RINvCsgskYLKf3nOe_4more1sKRe686920227122202761270a7fc3a9_EB2_", "more::s::<\"hi \\\"q\\\" 'a'\\n\\u{7f}é\">"},
      {"_RINvCsgskYLKf3nOe_4more1sKRe_EB2_", "more::s::<\"\">"},
      {"_RINvC4test3fooKj7b_E", "test::foo::<123>"},  // rustc-demangle's {:#} drops the "usize" suffix
  };
  for (const Vector& vector : kVectors) expect_demangles(vector);
}

TEST(Demangle, LeavesOtherNamesAsTheyAre) {
  for (const char* name : {"malloc", "", "_Z", "_Zfoo", "_R", "_RNvC4tes", "_R3NvC4test3foo", "_RNvC4test3foo$x",
                           "_RNvB0_3foo", "_ZN4test3foo17h0123456789abcdeE", "_RNvC4test3foou3bar"}) {
    EXPECT_EQ(demangle(name), name);
  }
}

// Names nested deeper than the demangler goes (200 levels) are left as they are.
TEST(Demangle, DeepNestingIsLeftAsItIs) {
  EXPECT_EQ(demangle("_RINvINvC1a1fuE1fuE"), "a::f::<()>::f::<()>");
  EXPECT_EQ(demangle("_RINvC1a1fTTTEEEE"), "a::f::<(((),),)>");
  std::string paths = "_R";  // f::<u>, nested: I Nv <path> 1f u E
  for (int i = 0; i < 500; ++i) paths += "INv";
  paths += "C1a";
  for (int i = 0; i < 500; ++i) paths += "1fuE";
  EXPECT_EQ(demangle(paths), paths);

  std::string types = "_RINvC1a1f" + std::string(300, 'T') + std::string(300, 'E') + "E";  // ((((...))))
  EXPECT_EQ(demangle(types), types);
}

// Backrefs can double the output at each step: the size limit stops it.
TEST(Demangle, ExponentialBackrefsAreLeftAsTheyAre) {
  EXPECT_EQ(demangle("_RINvC1a1fTuuETB7_B7_EE"), "a::f::<((), ()), (((), ()), ((), ()))>");
  // Each tuple holds the previous one twice: T B<prev> B<prev> E.
  std::string symbol = "_RINvC1a1fTuuE";
  size_t previous = 8;  // offset of "TuuE" after "_R"
  for (int i = 0; i < 30; ++i) {
    size_t here = symbol.size() - 2;
    auto base62 = [](size_t n) {
      static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
      if (n == 0) return std::string("_");
      std::string text;
      for (n -= 1;; n /= 62) {
        text.insert(text.begin(), kDigits[n % 62]);
        if (n < 62) break;
      }
      return text + "_";
    };
    symbol += "TB" + base62(previous) + "B" + base62(previous) + "E";
    previous = here;
  }
  symbol += "E";
  EXPECT_EQ(demangle(symbol), symbol);
}

// Mutations of real symbols: whatever comes back, nothing crashes or hangs.
TEST(Demangle, DamagedSymbolsNeverCrash) {
  const std::string seeds[] = {
      "_RINvCsgskYLKf3nOe_4more1gRDG_INtNtNtCs8NwYtU1Mohg_4core3ops8function2FnTRL0_eEEp6OutputRL0_eEL_EB2_",
      "_RINvCsgskYLKf3nOe_4more1pKVNtB2_1PS1xh1_1ysn2_EEB2_",
      "_RNvMNtCsl0gHu2WDNTj_3bigu7_1lqs71dNtB2_u13ncd_ska2e7a2cu8nave_6pa",
      "_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17hbe447098641a8023E",
      "_ZN8geometryplERKNS_4Vec2ES2_",
  };
  const std::string alphabet = "_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ$.";
  std::mt19937 random(7);
  for (const std::string& seed : seeds) {
    for (int round = 0; round < 400; ++round) {
      std::string damaged = seed;
      for (int edit = 0; edit < 3; ++edit) {
        size_t at = 2 + random() % (damaged.size() - 2);
        damaged[at] = alphabet[random() % alphabet.size()];
      }
      demangle(damaged);
      demangle(damaged.substr(0, random() % damaged.size()));
    }
  }
}

}  // namespace
}  // namespace nmprof::symbols
