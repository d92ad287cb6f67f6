// Number formats, name shortening and text layout helpers of the reports.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/report/model/frame_names.h"
#include "cli/report/render/json_writer.h"
#include "cli/report/render/text_layout.h"
#include "cli/report/units.h"
#include "formats/jfr/reading/chunk_header.h"
#include "tests/report/profile_maker.h"

namespace nmprof::report {
namespace {

TEST(Units, BytesInBinaryUnitsWithThreeDigits) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1.00 KiB");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(10 << 20), "10.0 MiB");
  EXPECT_EQ(format_bytes(300.0 * (1 << 30)), "300 GiB");
  EXPECT_EQ(format_bytes(1024.0 * 1024 - 1), "1.00 MiB");
  EXPECT_EQ(format_bytes(5e9), "4.66 GiB");
}

TEST(Units, CountsDurationsAndPercentages) {
  EXPECT_EQ(format_count(812.4), "812");
  EXPECT_EQ(format_count(12345), "12,345");
  EXPECT_EQ(format_count(99999.4), "99,999");
  EXPECT_EQ(format_count(123456), "123K");
  EXPECT_EQ(format_count(1234567), "1.23M");
  EXPECT_EQ(counted(1, "sample", "samples"), "1 sample");
  EXPECT_EQ(counted(2000, "sample", "samples"), "2,000 samples");
  EXPECT_EQ(format_duration(850'000), "850 us");
  EXPECT_EQ(format_duration(12'000'000), "12 ms");
  EXPECT_EQ(format_duration(3'400'000'000), "3.4 s");
  EXPECT_EQ(format_duration(125'000'000'000), "2m 05s");
  EXPECT_EQ(format_duration(3'720'000'000'000), "1h 02m");
  // Found by fuzz/report_fuzzer (fuzz/regressions/report/duration-past-int): hours past INT_MAX seconds.
  EXPECT_EQ(format_duration(jfr::kMaxTimeNanos), "1281023h 53m");
  EXPECT_EQ(format_percent(0.349), "34.9%");
  EXPECT_EQ(format_percent(1), "100.0%");
}

TEST(FrameNames, ShortenHidesTemplatesThenParametersThenCutsTheFront) {
  const std::string name =
      "std::_Hashtable<int, std::pair<int const, Widget>>::_M_insert(std::pair<int const, Widget>&&)";
  EXPECT_EQ(shorten(name, 200), name);
  EXPECT_EQ(shorten(name, 60), "std::_Hashtable<...>::_M_insert(std::pair<...>&&)");
  EXPECT_EQ(shorten(name, 40), "std::_Hashtable<...>::_M_insert(...)");
  EXPECT_EQ(shorten(name, 20), "..._M_insert(...)");  // from a name component, not mid-word
  EXPECT_EQ(shorten("operator<<(std::ostream&, Foo const&)", 20), "operator<<(...)");
  EXPECT_EQ(shorten("com.example.store.cache.Cache.load:12", 30), "c.e.s.c.Cache.load:12");
  EXPECT_EQ(shorten("libfoo.so+0x1a2b", 10), "...+0x1a2b");
  EXPECT_EQ(shorten("com.example.Cache$Loader.loadEverythingNow", 30), "...loadEverythingNow");
}

TEST(FrameNames, PhpFramesShowTheirFileAndLine) {
  profile::Frame method{"Cache::load", "/srv/app/src/Cache.php", profile::FrameKind::Php, 42, {}};
  EXPECT_EQ(function_name(method), "Cache::load");
  EXPECT_EQ(frame_name(method), "Cache::load (Cache.php:42)");
  EXPECT_EQ(frame_location(method), "php");
  EXPECT_EQ(function_location(method), "/srv/app/src/Cache.php");  // same names in other files stay apart
  profile::Frame internal{"str_repeat", "[internal function]", profile::FrameKind::Php, -1, {}};
  EXPECT_EQ(frame_name(internal), "str_repeat");
  profile::Frame no_line{"{main}", "index.php", profile::FrameKind::Php, -1, {}};
  EXPECT_EQ(frame_name(no_line), "{main} (index.php)");
}

TEST(FrameNames, JavaFramesNameTheirClassAndKind) {
  profile::Frame java{"load", "com.example.Cache", profile::FrameKind::JitCompiled, 42, {}};
  EXPECT_EQ(function_name(java), "com.example.Cache.load");
  EXPECT_EQ(frame_name(java), "com.example.Cache.load:42");
  EXPECT_EQ(frame_location(java), "jit");
  EXPECT_EQ(function_location(java), "");
  profile::Frame native{"parse(char const*)", "libapp.so", profile::FrameKind::Native, -1, {}};
  EXPECT_EQ(frame_name(native), "parse(char const*)");
  EXPECT_EQ(frame_location(native), "libapp.so");
}

TEST(FrameNames, OverloadsInOneListShowTheirParameters) {
  testing::ProfileMaker m;
  const auto& p = m.profile;
  uint32_t by_int = m.stack({"ns::f(int)", "main"}), by_double = m.stack({"ns::f(double)", "ns::g(int)", "main"});
  std::vector<uint32_t> frames = p.stacks()[by_int].frames;
  frames.insert(frames.end(), p.stacks()[by_double].frames.begin(), p.stacks()[by_double].frames.end());
  Overloads overloads(p, frames);
  EXPECT_EQ(one_line_stack(p, p.stacks()[by_int], 100, overloads), "ns::f(int) < main");
  EXPECT_EQ(one_line_stack(p, p.stacks()[by_double], 100, overloads), "ns::f(double) < ns::g < main");
  EXPECT_EQ(one_line_stack(p, p.stacks()[by_int], 100), "ns::f < main");  // alone, no overload to tell apart
  // Too long for its room, an overload loses its scope and template arguments, never its parameters.
  std::string long_name = "app::storage::Table<int>::insert(std::pair<int, int> const&)";
  EXPECT_EQ(shorten(long_name, 30, true), "...insert(std::pair<...> const&)");
  EXPECT_EQ(shorten(long_name, 30), "...Table<...>::insert(...)");

  // Java overloads differ only by their descriptors.
  profile::Frame put_int{"put", "app.Cache", profile::FrameKind::Java, 10, {}, "(ILjava/lang/String;)V"};
  profile::Frame put_longs{"put", "app.Cache", profile::FrameKind::Java, 20, {}, "([[JZ)V"};
  uint32_t a = m.profile.add_frame(put_int), b = m.profile.add_frame(put_longs);
  EXPECT_NE(a, b);
  Overloads java(p, std::vector<uint32_t>{a, b});
  EXPECT_EQ(listed_function_name(p, a, java), "app.Cache.put(int, String)");
  EXPECT_EQ(listed_function_name(p, b, java), "app.Cache.put(long[][], boolean)");
  EXPECT_EQ(listed_function_name(p, a, {}), "app.Cache.put");
  EXPECT_EQ(frame_name(put_int, true), "app.Cache.put(int, String):10");
}

TEST(FrameNames, OneLineStacksEndWithAnEllipsisWhenTheyDoNotFit) {
  testing::ProfileMaker m;
  uint32_t st = m.stack({"Parser<int>::parse(char const*)", "load_config()", "main"});
  const auto& stack = m.profile.stacks()[st];
  EXPECT_EQ(one_line_stack(m.profile, stack, 100), "Parser<...>::parse < load_config < main");
  EXPECT_EQ(one_line_stack(m.profile, stack, 34), "Parser<...>::parse < ...");
  EXPECT_EQ(one_line_stack(m.profile, m.profile.stacks()[m.profile.add_stack({})], 40), "(no stack)");
}

TEST(FrameNames, AFrameInItsColumnKeepsItsFileAndLine) {
  profile::Frame frame{"company::storage::Index<std::string>::insert_entries(std::map<std::string, int> const&, "
                       "Options const&, int) [clone .isra.0]",
                       "app", profile::FrameKind::Native, 10, "/src/storage/index.cpp"};
  EXPECT_EQ(fitted_frame_name(frame, 200), frame.function + " (index.cpp:10)");
  // Parameters go first, then GCC's clone suffix, then the front of the name; the line stays.
  EXPECT_EQ(fitted_frame_name(frame, 74), "company::storage::Index<...>::insert_entries(...) (index.cpp:10)");
  EXPECT_EQ(fitted_frame_name(frame, 40), "...insert_entries(...) (index.cpp:10)");
  profile::Frame php{"App\\Http\\CheckoutController::store", "/srv/app/Cache.php", profile::FrameKind::Php, 42, {}};
  EXPECT_EQ(fitted_frame_name(php, 30), "...store (Cache.php:42)");
  EXPECT_EQ(fitted_frame_name(frame, 22), "...insert_entries(...)");  // too narrow for both: the name
  profile::Frame inlined{"std::vector<int>::push_back(int const&)", "app", profile::FrameKind::Native, 7, "v.h", {},
                         true};
  EXPECT_EQ(fitted_frame_name(inlined, 40), "...push_back(...) (v.h:7) [inlined]");
}

TEST(FrameNames, OneLineStacksShowTheFrameThatTellsThemApart) {
  testing::ProfileMaker m;
  std::vector<std::string> common = {"alloc_buffer", "read_request", "handle", "serve"};
  auto with = [&](std::vector<std::string> tail) {
    std::vector<std::string> frames = common;
    frames.insert(frames.end(), tail.begin(), tail.end());
    return m.stack(frames);
  };
  uint32_t a = with({"worker_pool", "main"}), b = with({"admin_thread", "main"}), c = m.stack({"other", "main"});
  std::vector<TellingFrame> telling = telling_frames(m.profile, {a, b, c});
  EXPECT_EQ(telling[0].index, 4u);
  EXPECT_EQ(telling[1].index, 4u);
  EXPECT_EQ(telling[2].index, SIZE_MAX);  // shares no top frame: its own top tells it apart
  const auto& stack = m.profile.stacks()[a];
  EXPECT_EQ(one_line_stack(m.profile, stack, 54), "alloc_buffer < read_request < handle < serve < ...");
  EXPECT_EQ(one_line_stack(m.profile, stack, 54, {}, telling[0]),
            "alloc_buffer < read_request < ... < worker_pool < ...");
  EXPECT_EQ(one_line_stack(m.profile, stack, 200, {}, telling[0]),
            "alloc_buffer < read_request < handle < serve < worker_pool < main");

  // The same function at another line: the line tells them apart.
  auto at_line = [&](int32_t line) {
    profile::Stack s;
    s.frames = {m.profile.add_frame({"fill", "app", profile::FrameKind::Native, 5, "f.c"}),
                m.profile.add_frame({"load", "app", profile::FrameKind::Native, line, "f.c"}),
                m.profile.add_frame({"main", "app", profile::FrameKind::Native, 3, "f.c"})};
    return m.profile.add_stack(s);
  };
  uint32_t first = at_line(10), second = at_line(12);
  telling = telling_frames(m.profile, {first, second});
  EXPECT_TRUE(telling[0].same_function);
  EXPECT_EQ(one_line_stack(m.profile, m.profile.stacks()[second], 100, {}, telling[1]), "fill < load:12 < main");
}

TEST(TextLayout, WrapsAtSpacesAndQuotesPaths) {
  std::ostringstream out;
  write_wrapped(out, "note: ", "one two three four", 16);
  EXPECT_EQ(out.str(), "note: one two\n      three four\n");
  std::ostringstream long_word;
  write_wrapped(long_word, "more: ", "nmprof report /a/very/long/path.jfr --live", 20);
  EXPECT_EQ(long_word.str(), "more: nmprof report\n      /a/very/long/path.jfr\n      --live\n");
  EXPECT_EQ(cut_end("./server --port 8080", 12), "./server ...");
  EXPECT_EQ(shell_quote("/tmp/a.jfr"), "/tmp/a.jfr");
  EXPECT_EQ(shell_quote("/tmp/my file's.jfr"), "'/tmp/my file'\\''s.jfr'");
  // A newline or an escape sequence in a path: spelled out, the command still works in bash.
  EXPECT_EQ(shell_quote("/tmp/a\nb\x1b[31m'\\.jfr"), "$'/tmp/a\\x0ab\\x1b[31m\\'\\\\.jfr'");
}

TEST(JsonWriter, EscapesStringsAndReplacesInvalidUtf8) {
  std::ostringstream out;
  JsonWriter json(out);
  json.begin_object();
  json.field("s", std::string_view("a\"b\\c\n\x01 \xC3\xA9 \xFF"));
  json.field("n", 1.5);
  json.field("i", int64_t{-3});
  json.field("whole", 42000000.0);  // not 4.2e+07
  json.field("huge", 1e300);
  json.key("list");
  json.begin_array();
  json.end_array();
  json.end_object();
  EXPECT_EQ(out.str(),
            "{\n  \"s\": \"a\\\"b\\\\c\\u000a\\u0001 \xC3\xA9 \\ufffd\",\n  \"n\": 1.5,\n  \"i\": -3,\n"
            "  \"whole\": 42000000,\n  \"huge\": 1e+300,\n  \"list\": []\n}\n");
}

}  // namespace
}  // namespace nmprof::report
