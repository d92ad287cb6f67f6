#include "cli/output/removed_if_interrupted.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <iterator>

#include "cli/signals.h"

namespace nmprof::cli {
namespace {

struct Registered {
  int dir = -1;
  const char* name = nullptr;
};

// Read by the handler: changed only with the signals held.
Registered g_files[4];
int g_count = 0;
bool g_installed[std::size(kStoppingSignals)];

void remove_and_end(int signo) {
  for (const Registered& file : g_files)
    if (file.name) unlinkat(file.dir, file.name, 0);
  signal(signo, SIG_DFL);
  raise(signo);  // delivered once this handler returns
}

// Our handler for the signals still at their default action, or the default back.
void install(bool on) {
  for (size_t i = 0; i < std::size(kStoppingSignals); i++) {
    struct sigaction current {};
    sigaction(kStoppingSignals[i], nullptr, &current);
    if (on && current.sa_handler == SIG_DFL) {
      struct sigaction ours {};
      ours.sa_handler = remove_and_end;
      sigemptyset(&ours.sa_mask);
      sigaction(kStoppingSignals[i], &ours, nullptr);
      g_installed[i] = true;
    } else if (!on && g_installed[i]) {
      signal(kStoppingSignals[i], SIG_DFL);
      g_installed[i] = false;
    }
  }
}

}  // namespace

RemovedIfInterrupted::RemovedIfInterrupted(int dir, const char* name) {
  StoppingSignalsHeld held;
  for (int i = 0; i < static_cast<int>(std::size(g_files)); i++) {
    if (g_files[i].name) continue;
    g_files[i] = {dir, name};
    slot_ = i;
    if (g_count++ == 0) install(true);
    return;
  }
}

RemovedIfInterrupted::~RemovedIfInterrupted() {
  if (slot_ < 0) return;
  StoppingSignalsHeld held;
  g_files[slot_] = {};
  if (--g_count == 0) install(false);
}

}  // namespace nmprof::cli
