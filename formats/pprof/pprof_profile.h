// The content of a pprof profile (perftools.profiles.Profile) with strings in place
// of string-table indexes; encode() builds the table. Ids are 1-based positions:
// mapping i has id i + 1, and so on, the dense numbering pprof reads fastest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nmprof::pprof {

struct ValueType {
  std::string type;  // e.g. "alloc_space"
  std::string unit;  // e.g. "bytes"
};

// A string label (text) or a numeric one (number with an optional unit).
struct Label {
  std::string key;
  std::string text;
  int64_t number = 0;
  std::string number_unit;
  bool numeric = false;
};

struct Sample {
  std::vector<uint64_t> location_ids;  // innermost first
  std::vector<int64_t> values;         // one per sample type
  std::vector<Label> labels;
};

struct Mapping {
  uint64_t memory_start = 0;
  uint64_t memory_limit = 0;
  uint64_t file_offset = 0;
  std::string filename;
  std::string build_id;
  bool has_functions = false;
  bool has_filenames = false;
  bool has_line_numbers = false;
};

struct Line {
  uint64_t function_id = 0;
  int64_t line = 0;  // 0: unknown
};

struct Location {
  uint64_t mapping_id = 0;  // 0: none
  uint64_t address = 0;
  std::vector<Line> lines;  // innermost inlined function first
};

struct Function {
  std::string name;         // as shown (demangled)
  std::string system_name;  // as linked (mangled)
  std::string filename;
  int64_t start_line = 0;
};

struct Profile {
  std::vector<ValueType> sample_types;
  std::string default_sample_type;  // empty: pprof shows the last type
  std::vector<Sample> samples;
  std::vector<Mapping> mappings;  // the first is the main program
  std::vector<Location> locations;
  std::vector<Function> functions;
  std::vector<std::string> comments;
  int64_t time_nanos = 0;
  int64_t duration_nanos = 0;
  ValueType period_type;
  int64_t period = 0;
};

// The serialized message, uncompressed.
std::string encode(const Profile& profile);

class ProtoMessage;
// A Line message (OTLP's profiles.proto numbers its fields as profile.proto does).
ProtoMessage line_message(const Line& line);

}  // namespace nmprof::pprof
