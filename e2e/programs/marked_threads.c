// Threads that allocate between two marks on standard output ("start", "end"): a test
// compares the system calls made between them with and without the agent.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void* volatile sink;
static void* work(void* arg) {
  (void)arg;
  for (int i = 0; i < 50000; i++) { char* p = malloc(100 + i % 20000); sink = p; if (i % 4) free(p); }
  return NULL;
}
int main(void) {
  pthread_t t[3];
  pthread_create(&t[0], NULL, work, NULL);  // a thread before the marker: the writer starts
  pthread_join(t[0], NULL);
  write(1, "start\n", 6);
  for (int i = 1; i < 3; i++) pthread_create(&t[i], NULL, work, NULL);
  work(NULL);
  for (int i = 1; i < 3; i++) pthread_join(t[i], NULL);
  write(1, "end\n", 4);
  return 0;
}
