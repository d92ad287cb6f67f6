#include "cli/attach/attach_recordings.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <map>

#include "attach/target_files.h"
#include "cli/output/output_writer.h"
#include "cli/output/recording_merge.h"
#include "common/safe_file.h"

namespace nmprof::cli {
namespace {

constexpr std::string_view kExtension = ".jfr";
constexpr size_t kRandomLength = 26;  // attach::unpredictable_name()

std::string prefix_of(pid_t nspid) { return "nmprof-" + std::to_string(nspid) + "-"; }

// The pid in "<stem>.<pid>.jfr"; 0 for "<stem>.jfr"; -1 for any other name.
pid_t pid_in(std::string_view name, std::string_view stem) {
  if (name.size() < stem.size() + kExtension.size() || name.substr(0, stem.size()) != stem ||
      name.substr(name.size() - kExtension.size()) != kExtension)
    return -1;
  std::string_view middle = name.substr(stem.size(), name.size() - stem.size() - kExtension.size());
  if (middle.empty()) return 0;
  pid_t pid = 0;
  auto [end, error] = std::from_chars(middle.data() + 1, middle.data() + middle.size(), pid);
  return middle[0] == '.' && error == std::errc() && end == middle.data() + middle.size() && pid > 0 ? pid : -1;
}

// The names in the directory `dir` (an O_PATH descriptor).
std::vector<std::string> names_in(int dir) {
  std::vector<std::string> names;
  int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* listing = fd >= 0 ? fdopendir(fd) : nullptr;
  if (!listing) {
    if (fd >= 0) close(fd);
    return names;
  }
  while (dirent* entry = readdir(listing)) names.emplace_back(entry->d_name);
  closedir(listing);
  return names;
}

// The agent holds an exclusive lock on its file while it writes it.
bool still_written(int fd) {
  if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
    flock(fd, LOCK_UN);
    return false;
  }
  return errno == EWOULDBLOCK;
}

// The whole chunks of the recording behind `fd`, read when it holds a sample.
bool sampled(int fd, size_t complete) {
  std::vector<uint8_t> bytes(complete);
  return pread(fd, bytes.data(), complete, 0) == static_cast<ssize_t>(complete) && holds_samples(bytes);
}

}  // namespace

std::string new_recording_template(const attach::TargetProcess& target, const attach::TargetTmp& tmp) {
  return tmp.unpredictable_path(prefix_of(target.nspid), ".%p.jfr");
}

std::string recording_of(std::string_view recording_template, pid_t pid) {
  std::string path(recording_template);
  path.replace(path.find("%p"), 2, std::to_string(pid));
  return path;
}

std::string recording_stem(const attach::TargetProcess& target, const attach::TargetTmp& tmp, std::string_view path) {
  std::string dir = tmp.path + "/";
  if (path.substr(0, dir.size()) != dir) return "";
  return recording_stem_of_name(target.nspid, path.substr(dir.size()));
}

std::string recording_stem_of_name(pid_t nspid, std::string_view name) {
  std::string prefix = prefix_of(nspid);
  if (name.substr(0, prefix.size()) != prefix || name.size() < prefix.size() + kRandomLength) return "";
  std::string_view random = name.substr(prefix.size(), kRandomLength);
  if (random.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") != std::string_view::npos) return "";
  std::string stem(name.substr(0, prefix.size() + kRandomLength));
  return pid_in(name, stem) >= 0 ? stem : "";
}

std::optional<LeftRecordings> find_left_recordings(pid_t pid) {
  auto tmp = attach::open_local_tmp();
  if (!tmp) return std::nullopt;
  auto later = [](const struct stat& a, const struct stat& b) {
    return a.st_mtim.tv_sec != b.st_mtim.tv_sec ? a.st_mtim.tv_sec > b.st_mtim.tv_sec
                                                : a.st_mtim.tv_nsec > b.st_mtim.tv_nsec;
  };
  // Each session's newest file: the session whose files changed last is the one asked for.
  std::map<std::string, struct stat> sessions;
  for (const std::string& name : names_in(tmp->dir.get())) {
    std::string stem = recording_stem_of_name(pid, name);
    struct stat st {};
    if (stem.empty() || fstatat(tmp->dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        (geteuid() != 0 && st.st_uid != geteuid()))
      continue;
    auto [it, added] = sessions.try_emplace(stem, st);
    if (!added && later(st, it->second)) it->second = st;
  }
  if (sessions.empty()) return std::nullopt;
  auto newest = sessions.begin();
  for (auto it = sessions.begin(); it != sessions.end(); ++it)
    if (later(it->second, newest->second)) newest = it;
  LeftRecordings left{{}, std::move(*tmp), newest->first, static_cast<int>(sessions.size()) - 1};
  left.owner.pid = left.owner.nspid = pid;
  // Read and removed with the rights of whom the files belong to, as the target's.
  left.owner.status.euid = newest->second.st_uid;
  left.owner.status.egid = newest->second.st_gid;
  return left;
}

const AttachRecordings::File* AttachRecordings::find(const std::string& name) const {
  auto it = std::find_if(files_.begin(), files_.end(), [&](const File& f) { return f.name == name; });
  return it == files_.end() ? nullptr : &*it;
}

void AttachRecordings::gather() {
  for (const std::string& name : names_in(tmp_.dir.get())) {
    pid_t pid = pid_in(name, stem_);
    if (pid < 0 || find(name)) continue;
    pid_t child = pid == target_.nspid ? 0 : pid;
    if (!hold_open_) {
      files_.push_back({name, child, attach::UniqueFd()});
      continue;
    }
    int fd = safe_file::open_owned(tmp_.dir.get(), name.c_str(), O_RDONLY, target_.status.euid);
    if (fd >= 0) files_.push_back({name, child, attach::UniqueFd(fd)});
  }
  // The target's own first: it began before its children.
  std::stable_partition(files_.begin(), files_.end(), [](const File& f) { return f.child == 0; });
}

attach::UniqueFd AttachRecordings::readable(const File& file) const {
  if (!file.fd)
    return attach::UniqueFd(safe_file::open_owned(tmp_.dir.get(), file.name.c_str(), O_RDONLY, target_.status.euid));
  int fd = fcntl(file.fd.get(), F_DUPFD_CLOEXEC, 0);
  return attach::UniqueFd(fd >= 0 ? fd : -errno);
}

std::vector<pid_t> AttachRecordings::children_recording() const {
  std::vector<pid_t> children;
  for (const File& f : files_)
    if (attach::UniqueFd fd; f.child != 0 && (fd = readable(f)) && still_written(fd.get())) children.push_back(f.child);
  return children;
}

attach::Result<void> AttachRecordings::write_to(const std::string& output) const {
  std::vector<std::pair<attach::UniqueFd, size_t>> parts;  // descriptor, whole chunks
  for (const File& f : files_) {
    attach::UniqueFd fd = readable(f);
    size_t complete = fd ? complete_chunks(fd.get()) : 0;
    if (complete > 0 && (f.child == 0 || sampled(fd.get(), complete))) parts.emplace_back(std::move(fd), complete);
  }
  if (parts.empty()) return attach::Error{"the recording is empty: the agent wrote nothing readable"};
  std::string error;
  bool written = write_output(output, &error, [&](int out, std::string* why) {
    return std::all_of(parts.begin(), parts.end(),
                       [&](const auto& part) { return copy_file(part.first.get(), part.second, out, why); });
  });
  if (!written) return attach::Error{error};
  return {};
}

void AttachRecordings::remove() {
  for (const File& f : files_)
    if (attach::UniqueFd fd = readable(f)) (void)attach::remove_from_target_tmp(target_, tmp_, f.name, fd.get());
  files_.clear();
}

bool AttachRecordings::hold_a_recording() const {
  return std::any_of(files_.begin(), files_.end(), [this](const File& f) {
    attach::UniqueFd fd = readable(f);
    return fd && complete_chunks(fd.get()) > 0;
  });
}

std::string AttachRecordings::where() const {
  if (files_.empty()) return "";
  std::string text = tmp_.path + "/" + files_.front().name;
  if (files_.size() > 1) text += " (and " + std::to_string(files_.size() - 1) + " more beside it)";
  // The target's own view, and nmprof's while the target runs.
  if (tmp_.here != tmp_.path)
    text += " in the file system of process " + std::to_string(target_.pid) + " (" + tmp_.here + "/" +
            files_.front().name + " while it runs)";
  return text;
}

std::vector<std::string> AttachRecordings::names() {
  gather();
  std::vector<std::string> names;
  for (const File& f : files_) names.push_back(f.name);
  return names;
}

int AttachRecordings::open_file(const std::string& name) const {
  const File* file = find(name);
  return file ? readable(*file).release() : -ENOENT;
}

int AttachRecordings::open_writable(const std::string& name) const {
  if (!find(name)) return -ENOENT;
  return safe_file::open_owned(tmp_.dir.get(), name.c_str(), O_RDWR, target_.status.euid);
}

std::optional<uint64_t> AttachRecordings::size_of(const std::string& name) const {
  struct stat st;
  const File* file = find(name);
  if (!file) return std::nullopt;
  int found = file->fd ? fstat(file->fd.get(), &st) : fstatat(tmp_.dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
  if (found != 0) return std::nullopt;
  return static_cast<uint64_t>(st.st_size);
}

bool AttachRecordings::release(const std::string& name) {
  auto it = std::find_if(files_.begin(), files_.end(), [&](const File& f) { return f.name == name; });
  if (it == files_.end() || it->child == 0) return false;  // the target's own goes at the end
  bool gone = true;  // unless it is there and stays
  if (attach::UniqueFd fd = readable(*it))
    gone = static_cast<bool>(attach::remove_from_target_tmp(target_, tmp_, it->name, fd.get()));
  files_.erase(it);
  return gone;
}

}  // namespace nmprof::cli
