// Where the agent finds the PHP call stack (and the few other things it reads or
// writes) in the engine's structures, declared here rather than taken from PHP's
// headers: the agent builds without them. The offsets are those of PHP 8.2 on
// x86-64 (php-src PHP-8.2 branch: Zend/zend_globals.h struct
// _zend_executor_globals and _zend_compiler_globals, Zend/zend_compile.h struct
// _zend_execute_data, union _zend_function, struct _zend_internal_function,
// _zend_op_array and _zend_op, Zend/zend_types.h struct _zend_string and
// _zend_class_entry, Zend/zend_modules.h struct _zend_module_entry, main/SAPI.h struct _sapi_module_struct), checked with
// offsetof against Debian's php8.2-dev headers. They are used only when the
// running engine is 8.2.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nmprof::php::layout82 {

// zend_executor_globals (NTS: the exported `executor_globals`)
constexpr size_t kCurrentExecuteData = 488;
constexpr size_t kFlags = 993;   // uint8_t, after `active`
constexpr uint8_t kInShutdown = 1;  // EG_FLAGS_IN_SHUTDOWN: set as php_request_shutdown begins

// zend_execute_data: one PHP call frame
constexpr size_t kExecuteOpline = 0;  // const zend_op*: the instruction running (user code)
constexpr size_t kExecuteFunc = 24;   // zend_function*
constexpr size_t kExecutePrev = 48;   // zend_execute_data*: the caller's frame
constexpr size_t kExecuteNumArgs = 44;  // uint32_t This.u2.num_args: the arguments passed

// zend_compiler_globals (NTS: the exported `compiler_globals`)
constexpr size_t kCompilerFunctionTable = 56;  // HashTable*

// zend_internal_function
constexpr size_t kInternalHandler = 72;  // void (*)(zend_execute_data*, zval*)
constexpr size_t kInternalModule = 80;   // zend_module_entry*: read by OPcache's optimizer

// zend_module_entry (Zend/zend_modules.h)
constexpr size_t kModuleEntrySize = 168;
constexpr size_t kModuleSize = 0;      // unsigned short: sizeof(zend_module_entry)
constexpr size_t kModuleApi = 4;       // unsigned int: ZEND_MODULE_API_NO
constexpr size_t kModuleName = 32;     // const char*
constexpr size_t kModuleStarted = 136; // int
constexpr size_t kModuleType = 140;    // unsigned char: MODULE_PERSISTENT (1)
constexpr size_t kModuleNumber = 152;  // int
constexpr unsigned kModuleApiNo = 20220829;

// zend_function (common part, then zend_op_array for user code)
constexpr size_t kFunctionType = 0;   // uint8_t
constexpr size_t kFunctionName = 8;   // zend_string*, null for a file's top-level code
constexpr size_t kFunctionScope = 16; // zend_class_entry*, null outside classes
constexpr size_t kOpArrayFilename = 152;  // zend_string*
constexpr uint8_t kInternalFunction = 1;
constexpr uint8_t kUserFunction = 2;
constexpr uint8_t kEvalCode = 4;

// zend_op
constexpr size_t kOpExtendedValue = 20;  // uint32_t
constexpr size_t kOpLineno = 24;         // uint32_t
constexpr size_t kOpOpcode = 28;         // uint8_t
constexpr uint8_t kIncludeOrEval = 73;   // ZEND_INCLUDE_OR_EVAL; extended_value says which:
constexpr uint32_t kEval = 1, kInclude = 2, kIncludeOnce = 4, kRequire = 8, kRequireOnce = 16;

// zend_string
constexpr size_t kStringLength = 16;  // size_t
constexpr size_t kStringValue = 24;   // char[]

// zend_class_entry
constexpr size_t kClassName = 8;  // zend_string*

// sapi_module_struct (main/SAPI.h; the same from PHP 5 to 8.3): its name, then
// startup, shutdown, and the callbacks of each request's start and end.
constexpr size_t kSapiActivate = 32;    // int (*)(void)
constexpr size_t kSapiDeactivate = 40;  // int (*)(void)

}  // namespace nmprof::php::layout82
