// The ptrace attach's parts: ELF symbol lookup in a loaded libc, /proc/<pid>/maps,
// the syscall-restart rule, the refusal messages, a remote call into a child
// blocked in read() that must not see EINTR, and one into a child under seccomp
// asleep, whose sleep must not resume through restart_syscall.
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "attach/fd_io.h"
#include "attach/ptrace/elf_symbols.h"
#include "attach/ptrace/interrupted_syscall.h"
#include "attach/ptrace/mapped_objects.h"
#include "attach/ptrace/ptrace_permission.h"
#include "attach/ptrace/seized_thread.h"
#include "attach/ptrace/tracee_wait.h"
#include "attach/seccomp_sandbox.h"

namespace nmprof::attach {
namespace {

std::vector<Mapping> own_maps() {
  return parse_maps(read_text_at(AT_FDCWD, "/proc/self/maps").value_or(""));
}

uint64_t address_in_own_libc(const char* name) {
  auto target = inspect_process(getpid());
  EXPECT_TRUE(target.ok());
  auto libc = find_object(own_maps(), is_libc);
  EXPECT_TRUE(libc.has_value());
  auto found = remote_function(*target, *libc, name);
  EXPECT_TRUE(found.ok()) << found.error().message;
  return found.ok() ? *found : 0;
}

TEST(ElfSymbols, FindsDlopenWhereTheLoaderPutIt) {
  EXPECT_EQ(address_in_own_libc("dlopen"), reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "dlopen")));
}

TEST(ElfSymbols, TakesTheDefaultVersionOfAVersionedFunction) {
  // pthread_cond_wait@GLIBC_2.2.5 (old ABI) and pthread_cond_wait@@GLIBC_2.3.2.
  EXPECT_EQ(address_in_own_libc("pthread_cond_wait"),
            reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "pthread_cond_wait")));
}

TEST(ElfSymbols, RefusesAMissingFunctionAndAnIfunc) {
  auto libc = find_object(own_maps(), is_libc);
  ASSERT_TRUE(libc);
  UniqueFd fd(*open_mapped_file(*inspect_process(getpid()), *libc));
  EXPECT_FALSE(find_dynamic_function(fd.get(), "no_such_function_nmprof"));
  EXPECT_FALSE(find_dynamic_function(fd.get(), "strlen"));  // an IFUNC: its resolver, not strlen
}

// The path of a mapping (when map_files does not give the file) is opened without
// following links: one the target planted there never makes root open another file.
TEST(MappedFiles, APathThroughASymbolicLinkIsNotOpened) {
  auto target = inspect_process(getpid());
  ASSERT_TRUE(target);
  auto libc = find_object(own_maps(), is_libc);
  ASSERT_TRUE(libc);
  char dir[] = "/tmp/nmprof-links-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string file_link = std::string(dir) + "/libc.so.6", dir_link = std::string(dir) + "/lib";
  ASSERT_EQ(symlink(libc->path.c_str(), file_link.c_str()), 0);
  ASSERT_EQ(symlink(libc->path.substr(0, libc->path.rfind('/')).c_str(), dir_link.c_str()), 0);
  Mapping elsewhere = *libc;
  elsewhere.start = 0x1000;  // no mapping of this process: map_files has no such entry
  elsewhere.end = 0x2000;
  auto opened = open_mapped_file(*target, elsewhere);
  ASSERT_TRUE(opened) << opened.error().message;  // its real path, with no link on the way
  close(*opened);
  for (const std::string& through_link : {file_link, dir_link + "/libc.so.6"}) {
    elsewhere.path = through_link;
    auto refused = open_mapped_file(*target, elsewhere);
    EXPECT_FALSE(refused) << through_link;
    if (refused) close(*refused);
  }
  unlink(file_link.c_str());
  unlink(dir_link.c_str());
  rmdir(dir);
}

TEST(ElfSymbols, TellsAStaticExecutableByItsMissingInterpreter) {
  UniqueFd self(open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
  auto layout = read_elf_layout(self.get());
  ASSERT_TRUE(layout) << layout.error().message;
  EXPECT_TRUE(layout->has_interpreter);
  UniqueFd not_elf(open("/proc/self/status", O_RDONLY | O_CLOEXEC));
  EXPECT_FALSE(read_elf_layout(not_elf.get()));
}

// A file without section headers (stripped with sstrip, say) still has the program
// headers the attach needs; it just has no functions to name.
TEST(ElfSymbols, ReadsTheLayoutOfAFileWithoutSectionHeaders) {
  auto exe = read_text_at(AT_FDCWD, "/proc/self/exe");
  ASSERT_TRUE(exe);
  Elf64_Ehdr header;
  ASSERT_GE(exe->size(), sizeof header);
  memcpy(&header, exe->data(), sizeof header);
  header.e_shoff = 0;
  header.e_shnum = 0;
  header.e_shstrndx = 0;
  memcpy(exe->data(), &header, sizeof header);
  UniqueFd copy(memfd_create("nmprof-no-sections", MFD_CLOEXEC));
  ASSERT_TRUE(copy && write_all(copy.get(), *exe));
  auto layout = read_elf_layout(copy.get());
  ASSERT_TRUE(layout) << layout.error().message;
  EXPECT_TRUE(layout->has_interpreter);
  EXPECT_FALSE(layout->loads.empty());
  auto functions = read_functions(copy.get());
  ASSERT_TRUE(functions) << functions.error().message;
  EXPECT_TRUE(functions->empty());
}

TEST(Maps, ParsesLinesWithDeletedFilesAndAnonymousMemory) {
  auto maps = parse_maps(
      "7f00-7f10 r-xp 00001000 fd:01 1234  /usr/lib/libc.so.6\n"
      "7f10-7f20 rw-p 00000000 00:00 0 \n"
      "7f20-7f30 r--p 00000000 00:1f 99 /tmp/nmprof-agent-abc.so (deleted)\n");
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_TRUE(maps[0].executable);
  EXPECT_EQ(maps[0].offset, 0x1000u);
  EXPECT_EQ(maps[0].dev_major, 0xfdu);
  EXPECT_EQ(maps[0].inode, 1234u);
  EXPECT_EQ(maps[1].path, "");
  EXPECT_EQ(maps[2].path, "/tmp/nmprof-agent-abc.so");
  EXPECT_EQ(find_object(maps, is_nmprof_agent)->start, 0x7f20u);
  EXPECT_FALSE(find_object(maps, is_libc));  // only mapped from offset 0x1000
}

TEST(InterruptedSyscall, RestartsOnlyCallsThatDidNothingOnEintr) {
  constexpr int64_t kRestartNoHand = -514, kRestartSys = -512;
  EXPECT_EQ(restartable_result(SYS_epoll_wait, -EINTR), kRestartNoHand);
  EXPECT_EQ(restartable_result(SYS_read, -EINTR), kRestartNoHand);
  EXPECT_EQ(restartable_result(SYS_close, -EINTR), -EINTR);  // closed anyway: never again
  EXPECT_EQ(restartable_result(SYS_read, kRestartSys), kRestartSys);
  EXPECT_EQ(restartable_result(SYS_read, 5), 5);
  EXPECT_TRUE(is_idle_syscall(SYS_clock_nanosleep));
  EXPECT_TRUE(is_idle_syscall(SYS_restart_syscall));
  EXPECT_FALSE(is_idle_syscall(SYS_mmap));  // malloc calls it with its arena locked
}

TEST(InterruptedSyscall, KnowsTheWaitsThatResumeThroughRestartSyscall) {
  const uint64_t none[6] = {};
  EXPECT_TRUE(may_resume_through_restart_syscall(SYS_clock_nanosleep, none));
  EXPECT_TRUE(may_resume_through_restart_syscall(SYS_nanosleep, none));
  EXPECT_TRUE(may_resume_through_restart_syscall(SYS_restart_syscall, none));
  EXPECT_FALSE(may_resume_through_restart_syscall(SYS_read, none));
  EXPECT_FALSE(may_resume_through_restart_syscall(SYS_epoll_wait, none));
  const uint64_t poll_for_ever[6] = {0x1000, 1, static_cast<uint64_t>(-1)}, poll_a_second[6] = {0x1000, 1, 1000};
  EXPECT_FALSE(may_resume_through_restart_syscall(SYS_poll, poll_for_ever));
  EXPECT_TRUE(may_resume_through_restart_syscall(SYS_poll, poll_a_second));
  const uint64_t wait_for_ever[6] = {0x1000, FUTEX_WAIT_PRIVATE, 0, 0},
                 wait_until[6] = {0x1000, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 0, 0x2000},
                 wake[6] = {0x1000, FUTEX_WAKE_PRIVATE, 1, 0x2000};
  EXPECT_FALSE(may_resume_through_restart_syscall(SYS_futex, wait_for_ever));
  EXPECT_TRUE(may_resume_through_restart_syscall(SYS_futex, wait_until));
  EXPECT_FALSE(may_resume_through_restart_syscall(SYS_futex, wake));
}

TEST(InterruptedSyscall, AWaitMadeAgainAsItselfGoesBackToItsSyscallInstruction) {
  constexpr int64_t kRestartBlock = -516;
  user_regs_struct regs{};
  regs.orig_rax = SYS_clock_nanosleep;
  regs.rax = static_cast<uint64_t>(kRestartBlock);
  regs.rip = 0x401002;
  ASSERT_TRUE(resumes_through_restart_syscall(regs));
  restart_as_itself(regs);
  EXPECT_EQ(regs.rax, static_cast<uint64_t>(SYS_clock_nanosleep));
  EXPECT_EQ(regs.rip, 0x401000u);
  EXPECT_FALSE(resumes_through_restart_syscall(regs));
  regs.orig_rax = SYS_restart_syscall;  // allowed before, or the thread would be dead
  regs.rax = static_cast<uint64_t>(kRestartBlock);
  EXPECT_FALSE(resumes_through_restart_syscall(regs));
  regs.orig_rax = SYS_read;
  regs.rax = static_cast<uint64_t>(-512);  // -ERESTARTSYS: read again as itself by the kernel
  EXPECT_FALSE(resumes_through_restart_syscall(regs));
}

TEST(PtracePermission, NamesTheReasonAndTheFix) {
  PtraceFacts f;
  f.pid = 42;
  f.nmprof_euid = 1000;
  f.target_euid = 1001;
  EXPECT_NE(explain_ptrace_denied(f).find("run nmprof as that user or as root"), std::string::npos);
  f.target_euid = 1000;
  f.target_dumpable = false;
  EXPECT_NE(explain_ptrace_denied(f).find("not dumpable"), std::string::npos);
  f.target_dumpable = true;
  f.ptrace_scope = 1;
  EXPECT_NE(explain_ptrace_denied(f).find("sysctl kernel.yama.ptrace_scope=0"), std::string::npos);
  f.ptrace_scope = 3;
  EXPECT_NE(explain_ptrace_denied(f).find("until the next reboot"), std::string::npos);
  f.ptrace_scope = 0;
  f.nmprof_euid = 0;
  EXPECT_NE(explain_ptrace_denied(f).find("CAP_SYS_PTRACE"), std::string::npos);
  f.tracer = 77;
  f.tracer_name = "gdb";
  EXPECT_NE(explain_ptrace_denied(f).find("process 77 (gdb) traces it already"), std::string::npos);
}

// A child blocked in `blocking` (read or epoll_wait on a pipe) gets a remote call
// of atoi("1234"), and then its byte from the pipe, never EINTR.
void call_into_a_blocked_child(long blocking) {
  if (read_text_at(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope").value_or("0")[0] > '1' && geteuid() != 0)
    GTEST_SKIP() << "ptrace of a child is not allowed here";
  int pipe_fds[2], result_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  ASSERT_EQ(pipe(result_fds), 0);
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (blocking == SYS_epoll_wait) {
      int epoll = epoll_create1(0);
      epoll_event event{EPOLLIN, {}};
      epoll_ctl(epoll, EPOLL_CTL_ADD, pipe_fds[0], &event);
      // The raw call: glibc's epoll_wait is epoll_pwait on some architectures.
      if (syscall(SYS_epoll_wait, epoll, &event, 1, -1) != 1) {
        char answer = errno == EINTR ? 'I' : 'E';
        _exit(write(result_fds[1], &answer, 1) == 1 ? 0 : 1);
      }
    }
    char c;
    ssize_t n = read(pipe_fds[0], &c, 1);
    char answer = n == 1 ? c : (errno == EINTR ? 'I' : 'E');
    _exit(write(result_fds[1], &answer, 1) == 1 ? 0 : 1);
  }
  // Wait until the child blocks.
  std::string syscall_path = "/proc/" + std::to_string(child) + "/syscall";
  std::string blocked = std::to_string(blocking) + " ";
  for (int i = 0; i < 500 && read_text_at(AT_FDCWD, syscall_path.c_str()).value_or("").rfind(blocked, 0) != 0; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  auto target = inspect_process(child);
  ASSERT_TRUE(target);
  uint64_t atoi_address = reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "atoi"));  // same libc mapping after fork
  {
    TraceSignals held;
    auto deadline = Clock::now() + std::chrono::seconds(30);
    auto thread = SeizedThread::seize(*target, child, deadline);
    ASSERT_TRUE(thread) << thread.error().message;
    EXPECT_EQ(static_cast<int64_t>(thread->registers().orig_rax), blocking);
    auto result = thread->call(atoi_address, "1234", 0, deadline, "atoi");
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(*result, 1234u);
  }
  ASSERT_EQ(write(pipe_fds[1], "x", 1), 1);
  char answer = 0;
  ASSERT_EQ(read(result_fds[0], &answer, 1), 1);
  EXPECT_EQ(answer, 'x');  // 'I': the call saw EINTR
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(SeizedThread, ACallIntoAChildBlockedInReadLeavesItsReadAlone) { call_into_a_blocked_child(SYS_read); }

// epoll_wait ends with EINTR when interrupted (signal(7)); nmprof restarts it.
TEST(SeizedThread, ACallIntoAChildBlockedInEpollWaitLeavesItWaiting) { call_into_a_blocked_child(SYS_epoll_wait); }

// A child under a filter that kills restart_syscall, the call through which the
// kernel resumes a clock_nanosleep that ptrace interrupted, gets a remote call while
// it sleeps: its sleep is made again as itself, and it sleeps its time and exits 0
// instead of dying of SIGSYS.
TEST(SeizedThread, ACallIntoAChildUnderSeccompAsleepNeverResumesItThroughRestartSyscall) {
  if (read_text_at(AT_FDCWD, "/proc/sys/kernel/yama/ptrace_scope").value_or("0")[0] > '1' && geteuid() != 0)
    GTEST_SKIP() << "ptrace of a child is not allowed here";
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_restart_syscall, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program{sizeof code / sizeof code[0], code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
      _exit(2);
    timespec sleep{0, 500'000'000};
    _exit(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &sleep, nullptr) == 0 ? 0 : 1);
  }
  std::string syscall_path = "/proc/" + std::to_string(child) + "/syscall";
  std::string sleeping = std::to_string(SYS_clock_nanosleep) + " ";
  for (int i = 0; i < 500 && read_text_at(AT_FDCWD, syscall_path.c_str()).value_or("").rfind(sleeping, 0) != 0; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(seccomp_mode_of(child, child), 2);
  auto target = inspect_process(child);
  ASSERT_TRUE(target);
  uint64_t atoi_address = reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "atoi"));  // same libc mapping after fork
  {
    TraceSignals held;
    auto deadline = Clock::now() + std::chrono::seconds(30);
    auto thread = SeizedThread::seize(*target, child, deadline);
    ASSERT_TRUE(thread) << thread.error().message;
    ASSERT_EQ(static_cast<int64_t>(thread->registers().orig_rax), SYS_clock_nanosleep) << "asleep when seized";
    auto result = thread->call(atoi_address, "1234", 0, deadline, "atoi");
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(*result, 1234u);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << (WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status)) : "exited");
}

TEST(SeccompSandbox, ThisProcessHasNoneAndAFilteredChildIsSeen) {
  EXPECT_FALSE(seccomp_sandbox_of(getpid()));
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    sock_fprog program{1, &allow};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
      _exit(2);
    (void)!write(ready[1], "r", 1);
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  auto sandbox = seccomp_sandbox_of(child);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(sandbox);
  EXPECT_EQ(sandbox->filtered_threads, 1);
  EXPECT_EQ(sandbox->threads, 1);
  EXPECT_EQ(sandbox->strict_threads, 0);
  if (sandbox->filters != -1) {
    EXPECT_EQ(sandbox->filters, 2);  // Linux 5.9 on says how many
  }
  close(ready[0]);
  close(ready[1]);
}

}  // namespace
}  // namespace nmprof::attach
