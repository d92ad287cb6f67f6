#include "attach/proc_status.h"

#include <charconv>

namespace nmprof::attach {
namespace {

// The value of "<key>:\t..." in the status text, without the key.
std::optional<std::string_view> field(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':') {
      return line.substr(key.size() + 1);
    }
    pos = end + 1;
  }
  return std::nullopt;
}

template <typename T>
std::vector<T> numbers(std::string_view text, int base = 10) {
  std::vector<T> out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p == end) break;
    T value{};
    auto [next, ec] = std::from_chars(p, end, value, base);
    if (ec != std::errc()) return {};
    out.push_back(value);
    p = next;
  }
  return out;
}

std::optional<uint64_t> signal_mask(std::string_view text, std::string_view key) {
  auto value = field(text, key);
  if (!value) return std::nullopt;
  auto masks = numbers<uint64_t>(*value, 16);
  if (masks.size() != 1) return std::nullopt;
  return masks[0];
}

}  // namespace

bool ProcessStatus::catches(int signal) const {
  uint64_t bit = uint64_t{1} << (signal - 1);
  return (signals_caught & bit) && !(signals_ignored & bit);
}

std::optional<ProcessStatus> parse_process_status(std::string_view text) {
  ProcessStatus status;
  auto uids = numbers<uid_t>(field(text, "Uid").value_or(""));
  auto gids = numbers<gid_t>(field(text, "Gid").value_or(""));
  auto caught = signal_mask(text, "SigCgt");
  auto ignored = signal_mask(text, "SigIgn");
  // Real, effective, saved, filesystem: the second one is what the JVM checks.
  if (uids.size() != 4 || gids.size() != 4 || !caught || !ignored) return std::nullopt;
  status.euid = uids[1];
  status.egid = gids[1];
  status.groups = numbers<gid_t>(field(text, "Groups").value_or(""));
  auto nspids = numbers<pid_t>(field(text, "NSpid").value_or(""));
  if (!nspids.empty()) status.nspid = nspids.back();
  status.signals_caught = *caught;
  status.signals_ignored = *ignored;
  return status;
}

}  // namespace nmprof::attach
