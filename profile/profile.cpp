#include "profile/profile.h"

#include <algorithm>
#include <charconv>
#include <functional>

#include "profile/sample_selector.h"

namespace nmprof::profile {
namespace {

size_t combine(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2)); }

template <class Key, class Ids>
uint32_t intern(const Key& key, std::vector<Key>& items, Ids& ids) {
  auto [it, inserted] = ids.try_emplace(key, static_cast<uint32_t>(items.size()));
  if (inserted) items.push_back(key);
  return it->second;
}

}  // namespace

const char* frame_kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::Native: return "native";
    case FrameKind::Cpp: return "c++";
    case FrameKind::Kernel: return "kernel";
    case FrameKind::Interpreted: return "interpreted";
    case FrameKind::JitCompiled: return "jit";
    case FrameKind::Inlined: return "inlined";
    case FrameKind::Java: return "java";
    case FrameKind::JavaNative: return "java-native";
    case FrameKind::Php: return "php";
  }
  return "native";
}

bool is_java(FrameKind kind) {
  return kind == FrameKind::Interpreted || kind == FrameKind::JitCompiled || kind == FrameKind::Inlined ||
         kind == FrameKind::Java || kind == FrameKind::JavaNative;
}

const char* allocator_name(Allocator allocator) {
  return jfr::schema::allocator_name(static_cast<jfr::schema::AllocatorKey>(allocator));
}

bool is_runtime_frame(FrameKind kind) { return is_java(kind) || kind == FrameKind::Php; }

std::string Process::title() const {
  if (command_at_start.empty() || command_at_start == command) return command;
  return command + " (was " + command_at_start + ")";
}

const std::string* Process::setting(const std::string& name) const {
  auto it = settings.find(name);
  return it == settings.end() ? nullptr : &it->second;
}

const Statistic* Process::statistic(const std::string& name) const {
  for (const auto& s : statistics)
    if (s.name == name) return &s;
  return nullptr;
}

std::optional<uint64_t> Process::sampling_interval() const {
  const std::string* text = setting("nativemem");
  uint64_t v = 0;
  if (!text) return std::nullopt;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (error != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

bool Process::live_tracking() const {
  const std::string* text = setting("live");
  return text && *text == "true";
}

size_t Profile::Hash::operator()(const Frame& f) const {
  size_t h = std::hash<std::string>()(f.function);
  h = combine(h, std::hash<std::string>()(f.container));
  h = combine(h, static_cast<size_t>(f.kind));
  h = combine(h, std::hash<std::string>()(f.file));
  h = combine(h, f.inlined);
  return combine(h, static_cast<size_t>(f.line));
}

size_t Profile::Hash::operator()(const Stack& s) const {
  size_t h = s.truncated;
  for (uint32_t f : s.frames) h = combine(h, f);
  return h;
}

size_t Profile::Hash::operator()(const Thread& t) const {
  size_t h = combine(t.process, static_cast<size_t>(t.os_thread_id));
  h = combine(h, static_cast<size_t>(t.java_thread_id));
  return combine(h, std::hash<std::string>()(t.name));
}

size_t Profile::Hash::operator()(const SampleOrigin& o) const {
  size_t h = combine(o.process, o.thread);
  h = combine(h, o.stack);
  h = combine(h, static_cast<size_t>(o.source) << 8 | static_cast<size_t>(o.allocator));
  h = combine(h, o.context);
  h = combine(h, static_cast<size_t>(o.span_id));
  return combine(h, static_cast<size_t>(o.local_root_span_id));
}

size_t Profile::Hash::operator()(const Context& c) const {
  size_t h = c.values.size();
  for (const auto& v : c.values) h = combine(h, std::hash<std::string>()(v));
  return h;
}

uint32_t Profile::add_context(const Context& context) {
  Context trimmed = context;  // trailing empty values are implied
  while (!trimmed.values.empty() && trimmed.values.back().empty()) trimmed.values.pop_back();
  return intern(trimmed, contexts_, context_ids_);
}

const std::string& Profile::attribute(uint32_t context, std::string_view name) const {
  static const std::string kNone;
  const auto& values = contexts_[context].values;
  for (size_t i = 0; i < context_attributes.size() && i < values.size(); i++)
    if (context_attributes[i] == name) return values[i];
  return kNone;
}

uint32_t Profile::add_allocation(const Sample& sample) {
  if (sample.carried && sample.source == AllocationSource::Native) {
    carried_.push_back(sample);
    return kNotKept;
  }
  return take(sample);
}

void Profile::end_file(const std::vector<uint32_t>& processes, int64_t start_nanos, int64_t end_nanos,
                       bool complete) {
  live_.settle(live_changes());
  for (const Sample& sample : carried_)
    if (!live_.restate(sample.process, sample.address)) take(sample);
  carried_.clear();
  bool tells_of_missed_frees = complete && (!selector_ || selector_->keeps_free(*this, 0, end_nanos));
  live_.end_file(tells_of_missed_frees ? processes : std::vector<uint32_t>{}, start_nanos, live_changes());
}

uint32_t Profile::take(const Sample& sample) {
  bool native = sample.source == AllocationSource::Native;
  if (selector_ && !selector_->keeps(*this, sample)) {
    // Its free must still find it: a free that finds nothing would take an earlier
    // block. No need when that free would be turned away too (after --to).
    if (native && selector_->keeps_free(*this, sample.process, sample.time_nanos))
      live_.allocated(sample.process, sample.address,
                      {kNotKept, sample.weight_when_live(), sample.time_nanos, sample.size}, live_changes());
    return kNotKept;
  }
  const SampleOrigin& origin = sample;
  auto [it, added] = allocation_ids_.try_emplace(origin, static_cast<uint32_t>(allocations_.size()));
  if (added) allocations_.push_back({origin, {}, {}});
  Totals totals = sample.carried ? Totals{} : sample.totals();
  allocations_[it->second].allocated.add(totals);
  if (!sample.carried) time_series_.allocated(sample.time_nanos, totals.bytes);
  if (native)
    live_.allocated(sample.process, sample.address,
                    {it->second, sample.weight_when_live(), sample.time_nanos, sample.size}, live_changes());
  else
    lifetimes_.allocated(it->second, sample.time_nanos, totals);
  return it->second;
}

void Profile::add_free(uint32_t process, int64_t time_nanos, uint64_t address, const std::optional<Move>& moved,
                       bool in_later_chunk) {
  if (selector_ && !selector_->keeps_free(*this, process, time_nanos)) return;
  live_.freed(process, address, time_nanos, live_changes(), moved, in_later_chunk);
}

void Profile::hold_from(uint32_t process, int64_t time_nanos) { live_.hold_from(process, time_nanos, live_changes()); }

void Profile::settle() {
  live_.settle(live_changes());
  leave_at_exit();
}

// A process's blocks still live when its recording ended were given back with it: the
// live series drops them then, so that processes one after another do not add up.
// They stay in the live view of the whole recording (each process's end), unless the
// recording is read only up to a moment after that process ended but before the last
// one did (--to, --peak): then they were not live at that moment.
void Profile::leave_at_exit() {
  int64_t last_end = INT64_MIN;
  for (const auto& p : processes) last_end = std::max(last_end, p.end_nanos);
  bool read_whole = !selector_ || selector_->keeps_free(*this, 0, last_end);
  std::vector<std::pair<uint32_t, Totals>> left;  // process, a block it left live
  live_.for_each_live([&](uint32_t process, const LiveTracker::Block& b) {
    if (b.allocation != kNotKept) left.emplace_back(process, sample_totals(b.size, b.weight));
  });
  for (uint32_t i = 0; i < processes.size(); i++) {
    int64_t end = processes[i].end_nanos;
    if (end >= last_end || (selector_ && !selector_->keeps_free(*this, i, end))) continue;
    if (!read_whole) {
      live_.ended(i, end, live_changes());
      continue;
    }
    for (const auto& [process, totals] : left)
      if (process == i) time_series_.freed(end, totals.bytes, totals.bytes_variance);
  }
}

void Profile::live_changed(const LiveTracker::Block& block, std::optional<int64_t> freed_at) {
  if (block.allocation == kNotKept) return;
  Totals totals = sample_totals(block.size, block.weight);
  if (!freed_at) {
    allocations_[block.allocation].live.add(totals);
    time_series_.became_live(block.time_nanos, totals.bytes, totals.bytes_variance);
    lifetimes_.allocated(block.allocation, block.time_nanos, totals);
  } else {
    allocations_[block.allocation].live.remove(totals);
    time_series_.freed(*freed_at, totals.bytes, totals.bytes_variance);
    lifetimes_.freed(block.allocation, block.time_nanos, *freed_at, totals);
  }
}

void Profile::map_stacks(const std::function<uint32_t(uint32_t)>& new_stack) {
  for (auto& a : allocations_) a.stack = new_stack(a.stack);
  allocation_ids_.clear();  // origins changed: later samples start new sums
}

std::vector<LiveSample> Profile::live_samples() const {
  std::vector<LiveSample> live;
  live_.for_each_live([&](uint32_t, const LiveTracker::Block& b) {
    if (b.allocation != kNotKept) live.push_back({b.allocation, b.time_nanos, sample_totals(b.size, b.weight)});
  });
  std::sort(live.begin(), live.end(), [](const LiveSample& x, const LiveSample& y) {
    return x.time_nanos != y.time_nanos ? x.time_nanos < y.time_nanos : x.allocation < y.allocation;
  });
  return live;
}

uint32_t Profile::add_frame(const Frame& frame) { return intern(frame, frames_, frame_ids_); }

uint32_t Profile::add_stack(const Stack& stack) { return intern(stack, stacks_, stack_ids_); }

uint32_t Profile::add_thread(const Thread& thread) { return intern(thread, threads_, thread_ids_); }

}  // namespace nmprof::profile
