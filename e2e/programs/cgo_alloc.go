// A Go program that allocates through C (cgo): COUNT blocks of SIZE bytes at one C
// site, every other one freed. Go leaves by a raw exit_group when main returns:
// nothing of the agent runs at its end.
//   cgo_alloc COUNT SIZE
package main

/*
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void* cgo_site(size_t size) {
	void* p = malloc(size);
	memset(p, 1, 16);
	return p;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"unsafe"
)

func main() {
	count, _ := strconv.Atoi(os.Args[1])
	size, _ := strconv.Atoi(os.Args[2])
	blocks := make([]unsafe.Pointer, count)
	for i := range blocks {
		blocks[i] = C.cgo_site(C.size_t(size))
	}
	for i := 0; i < count; i += 2 {
		C.free(blocks[i])
	}
	fmt.Printf("kept %d blocks of %d bytes\n", count/2, size)
}
