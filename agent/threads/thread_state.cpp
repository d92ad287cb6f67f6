#include "agent/threads/thread_state.h"

namespace nmprof {

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));
int g_process_id = 0;

}  // namespace nmprof
