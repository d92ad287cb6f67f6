#include "cli/output/recording_merge.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>

#include "cli/output/output_writer.h"
#include "cli/run/surviving_processes.h"
#include "common/exit_watch_lock.h"
#include "common/safe_file.h"
#include "formats/jfr/nmprof_schema.h"
#include "formats/jfr/reading/chunk_header.h"
#include "formats/jfr/reading/recording_file.h"
#include "formats/jfr/varint.h"
#include "formats/jfr/writing/chunk_writer.h"

namespace nmprof::cli {
namespace {

constexpr int kExitWatchMillis = 15000;  // its last write has 10 s (exit_watch.cpp)

struct Input {
  std::string name;
  std::unique_ptr<MappedFile> file;
  int64_t start_nanos = 0;
  size_t complete_bytes = 0;  // the prefix made of whole chunks
  bool sampled = false;
  // It holds samples, or says what the run's profile lacks: an exec of a program
  // that left no recording (a static one behind a shell).
  bool telling = false;
};

// Measures the prefix of whole chunks; warns about what follows it.
void measure(Input& input, std::vector<std::string>& warnings) {
  auto bytes = input.file->bytes();
  size_t offset = complete_chunks(bytes);
  if (offset > 0) input.start_nanos = jfr::parse_chunk_header(bytes).start_nanos;
  input.complete_bytes = offset;
  if (offset < bytes.size())
    warnings.push_back(input.name + ": dropped " +
                       std::to_string(bytes.size() - offset) +
                       " bytes written after its last complete write (the process died while writing)");
}

// The length of the prefix of a file of `size` bytes made of whole chunks;
// read_header(offset, out) reads the header at `offset`.
template <typename ReadHeader>
size_t whole_chunks(size_t size, ReadHeader read_header) {
  size_t offset = 0;
  uint8_t bytes[jfr::kChunkHeaderSize];
  while (offset + jfr::kChunkHeaderSize <= size && read_header(offset, bytes)) {
    jfr::ChunkHeader header;
    try {
      header = jfr::parse_chunk_header(bytes);
    } catch (const std::exception&) {
      break;
    }
    if (header.size < jfr::kChunkHeaderSize || header.size > size - offset || header.metadata_offset == 0) break;
    offset += header.size;
  }
  return offset;
}

}  // namespace

bool still_recording(int fd) {
  if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
    flock(fd, LOCK_UN);
    return false;
  }
  return errno == EWOULDBLOCK;
}

size_t complete_chunks(std::span<const uint8_t> bytes) {
  return whole_chunks(bytes.size(), [&](size_t offset, uint8_t* header) {
    std::memcpy(header, bytes.data() + offset, jfr::kChunkHeaderSize);
    return true;
  });
}

size_t complete_chunks(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return 0;
  return whole_chunks(static_cast<size_t>(st.st_size), [fd](size_t offset, uint8_t* header) {
    return pread(fd, header, jfr::kChunkHeaderSize, static_cast<off_t>(offset)) ==
           static_cast<ssize_t>(jfr::kChunkHeaderSize);
  });
}

namespace {

// Calls visit(type, fields) for each record of whole chunks, until it returns false.
// Records are laid end to end after each chunk's header: their size, then their type
// (nmprof's own ids: no need to read the chunk's metadata), then their fields.
template <typename Visit>
void for_each_record(std::span<const uint8_t> chunks, Visit visit) {
  for (size_t chunk = 0; chunk < chunks.size();) {
    uint64_t size = jfr::parse_chunk_header(chunks.subspan(chunk)).size;
    if (size < jfr::kChunkHeaderSize || size > chunks.size() - chunk) break;
    auto records = chunks.subspan(chunk, size);
    for (size_t at = jfr::kChunkHeaderSize; at < records.size();) {
      uint64_t record_size, type;
      const uint8_t* end = records.data() + records.size();
      size_t n = jfr::decode_varint(records.data() + at, end, record_size);
      size_t m = n == 0 ? 0 : jfr::decode_varint(records.data() + at + n, end, type);
      if (m == 0 || record_size < n + m || record_size > records.size() - at) break;
      if (!visit(type, records.subspan(at + n + m, record_size - n - m))) return;
      at += record_size;
    }
    chunk += records.size();
  }
}

}  // namespace

bool holds_samples(std::span<const uint8_t> chunks) {
  bool found = false;
  for_each_record(chunks, [&found](uint64_t type, std::span<const uint8_t>) {
    found = type == jfr::schema::kMallocEvent;
    return !found;
  });
  return found;
}

uint64_t last_stop_reason(std::span<const uint8_t> chunks) {
  // nmprof.Statistics: eleven counts and times, then stoppedGrowing (recording_writer.cpp).
  constexpr int kStopField = 11;
  uint64_t reason = jfr::schema::kGrowing;
  for_each_record(chunks, [&reason](uint64_t type, std::span<const uint8_t> fields) {
    if (type != jfr::schema::kStatisticsEvent) return true;
    const uint8_t* at = fields.data();
    const uint8_t* end = fields.data() + fields.size();
    uint64_t value = 0;
    for (int field = 0; field <= kStopField; field++) {
      size_t n = jfr::decode_varint(at, end, value);
      if (n == 0) return true;
      at += n;
    }
    reason = value;
    return true;
  });
  return reason;
}

// One warning per program that vfork() children exec'd and that left no recording:
// no file under the child's pid, and no process of that pid still running.
void name_unrecorded_programs(const std::vector<ExecFromVforkChild>& execs, const std::vector<std::string>& names,
                              const std::vector<SurvivingProcess>& survivors, MergeResult* result) {
  std::map<std::string, std::vector<pid_t>> unrecorded;
  for (const ExecFromVforkChild& e : execs) {
    std::string pid = std::to_string(e.pid);
    bool recorded = std::any_of(names.begin(), names.end(), [&pid](const std::string& n) {
      return n.starts_with(pid + ".");
    });
    bool running = std::any_of(survivors.begin(), survivors.end(), [&e](const auto& p) { return p.pid == e.pid; });
    if (!recorded && !running) unrecorded[e.program].push_back(e.pid);
  }
  for (const auto& [program, pids] : unrecorded) {
    std::string who = pids.size() == 1 ? "process " + std::to_string(pids[0])
                                       : std::to_string(pids.size()) + " processes (" + std::to_string(pids[0]) + ", ...)";
    result->warnings.push_back(who + " exec'd " + program + ", which left no recording (statically linked, setuid, "
                               "or started without nmprof's LD_PRELOAD): what it allocated is not in the profile");
  }
  result->programs_unrecorded = !unrecorded.empty();
}

bool merge_recordings(StagingDirectory& directory, const std::vector<SurvivingProcess>& survivors,
                      const std::vector<ExecFromVforkChild>& execs, const std::string& output, MergeResult* result,
                      std::string* error) {
  name_unrecorded_programs(execs, directory.names(".jfr"), survivors, result);
  std::vector<Input> inputs;
  std::vector<std::string> outlived;  // pids
  for (const std::string& name : directory.names(".jfr")) {
    int fd = directory.open_file(name);
    if (fd < 0) {
      result->warnings.push_back(name + " left out: " + safe_file::error_text(fd));
      continue;
    }
    // A process that ended may have left its last write to its exit watch, a moment
    // after (agent/safety/exit_watch.h).
    if (!still_recording(fd)) exit_watch_lock::wait_until_released(fd, kExitWatchMillis);
    Input input{name, nullptr};
    try {
      input.file = std::make_unique<MappedFile>(jfr::map_recording(fd, name));
    } catch (const std::exception& e) {
      result->warnings.push_back(e.what());
      close(fd);
      continue;
    }
    measure(input, result->warnings);
    if (still_recording(fd)) {
      outlived.push_back(name.substr(0, name.find('.')));
      result->warnings.push_back("process " + outlived.back() +
                                 " outlived the command: what it records from now on is not in the profile");
    }
    close(fd);
    if (input.complete_bytes > 0) inputs.push_back(std::move(input));
  }
  for (const SurvivingProcess& p : survivors)
    if (std::find(outlived.begin(), outlived.end(), std::to_string(p.pid)) == outlived.end())
      result->warnings.push_back("process " + std::to_string(p.pid) + " (" + p.name +
                                 ") outlived the command before it wrote anything: what it records is not in the "
                                 "profile");
  std::sort(inputs.begin(), inputs.end(), [](const Input& a, const Input& b) { return a.start_nanos < b.start_nanos; });
  for (Input& input : inputs) {
    auto chunks = input.file->bytes().first(input.complete_bytes);
    input.sampled = holds_samples(chunks);
    input.telling = input.sampled || last_stop_reason(chunks) == jfr::schema::kExeced;
  }
  auto sampled = [](const Input& input) { return input.sampled; };
  auto telling = [](const Input& input) { return input.telling; };
  // The oldest process's stays when none sampled anything: a readable recording
  // that says so.
  bool any_sampled = std::any_of(inputs.begin(), inputs.end(), sampled);
  for (size_t i = inputs.size(); i-- > 0;)
    if (!telling(inputs[i]) && (any_sampled || i > 0)) inputs.erase(inputs.begin() + static_cast<long>(i));
  result->written = !inputs.empty();
  if (!inputs.empty()) {
    bool written = write_output(output, error, [&](int fd, std::string* why) {
      for (const Input& input : inputs)
        if (!write_bytes(fd, input.file->bytes().first(input.complete_bytes), output, why)) return false;
      return true;
    });
    if (!written) {
      *error += "; the per-process recordings are kept in " + directory.path();
      return false;
    }
  }
  inputs.clear();
  directory.remove();
  return true;
}

}  // namespace nmprof::cli
