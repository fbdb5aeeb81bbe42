/* A Windows crash program for dump_syms' end-to-end test (mkcrash.sh
 * builds it): main -> outer -> middle -> helper (inlined into middle) ->
 * crash, which writes through a null pointer. The unhandled-exception
 * filter writes crash.dmp with MiniDumpWriteDump. */
#include <windows.h>
#include <dbghelp.h>

static LONG WINAPI filter(EXCEPTION_POINTERS *ep) {
	HANDLE f = CreateFileA("crash.dmp", GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	MINIDUMP_EXCEPTION_INFORMATION mei = {GetCurrentThreadId(), ep, FALSE};
	MiniDumpWriteDump(GetCurrentProcess(), GetCurrentProcessId(), f, MiniDumpNormal, &mei, NULL, NULL);
	CloseHandle(f);
	ExitProcess(3);
	return EXCEPTION_EXECUTE_HANDLER;
}

volatile int *target;

__attribute__((noinline)) void crash(int n) {
	*target = n; /* the crash */
}

static inline __attribute__((always_inline)) void helper(int n) {
	crash(n * 3);
	target = 0;
}

__attribute__((noinline)) void middle(int n) {
	helper(n + 1);
	target = 0;
}

__attribute__((noinline)) void outer(int n) {
	middle(n * 2);
	target = 0;
}

int main(int argc, char **argv) {
	SetUnhandledExceptionFilter(filter);
	outer(argc);
	return 0;
}
