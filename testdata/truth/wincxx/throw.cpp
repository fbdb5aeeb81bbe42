/* A C++ exception in a mingw program: main -> run -> level1 -> level2 ->
 * thrower, which throws; libstdc++'s __cxa_throw calls libgcc's
 * _Unwind_RaiseException, which raises it with RaiseException
 * (kernelbase.dll) as the SEH exception STATUS_GCC_THROW. A vectored
 * exception handler (as a crash reporter watching first-chance exceptions
 * has) writes the dump, whose exception context is the thread's in
 * RaiseException. */
#include <windows.h>
#include <dbghelp.h>
#include <stdexcept>

#define NOINLINE __attribute__((noinline))

static const char *dump_name = "throw.dmp";

static LONG WINAPI handler(EXCEPTION_POINTERS *ep) {
	if (ep->ExceptionRecord->ExceptionCode != 0x20474343) /* STATUS_GCC_THROW */
		return EXCEPTION_CONTINUE_SEARCH;
	HANDLE f = CreateFileA(dump_name, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	MINIDUMP_EXCEPTION_INFORMATION mei = {GetCurrentThreadId(), ep, FALSE};
	MiniDumpWriteDump(GetCurrentProcess(), GetCurrentProcessId(), f, MiniDumpNormal, &mei, NULL, NULL);
	CloseHandle(f);
	ExitProcess(3);
	return EXCEPTION_EXECUTE_HANDLER;
}

volatile int sink;

NOINLINE void thrower(int n) {
	sink = n;
	throw std::runtime_error("thrown");
}

NOINLINE int level2(int n) {
	thrower(n + 1);
	return sink;
}

NOINLINE int level1(int n) {
	int r = level2(n + 1);
	sink = r;
	return r;
}

NOINLINE int run(int n) {
	int r = level1(n + 1);
	sink = r;
	return r;
}

int main(int argc, char **argv) {
	if (argc > 1)
		dump_name = argv[1];
	AddVectoredExceptionHandler(1, handler);
	sink = run(argc);
	return 0;
}
