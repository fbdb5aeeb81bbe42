/* Windows crash programs for dump_syms' end-to-end tests (mkprogs.sh
 * builds them for x86_64 and i686, at -O0 and -O2). argv[1] picks the
 * crash, argv[2] names the dump the unhandled-exception filter writes
 * with MiniDumpWriteDump:
 *
 *   cpp     main -> run_cpp -> geo::Registry::measure -> geo::total<geo::Shape>
 *           -> geo::Square::area (a virtual call), which writes through a
 *           null pointer
 *   dll     main -> run_dll -> lib_apply (lib.dll) -> lib_step (lib.dll),
 *           which writes through a null pointer
 *   thread  main -> run_thread -> main_wait spins; a thread idle_proc ->
 *           idle_loop spins; a thread crash_proc -> thread_work ->
 *           thread_crash writes through a null pointer
 *   inline  main -> run_inline -> level1 -> level2 -> level3 (the three
 *           always inlined into run_inline), which writes through a null
 *           pointer
 *   align   main -> run_align -> aligned_work (its frame realigned to 64
 *           bytes for a local) -> align_leaf, which writes through a null
 *           pointer
 */
#include <windows.h>
#include <dbghelp.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define INLINE static inline __attribute__((always_inline))

static const char *dump_name = "crash.dmp";

static LONG WINAPI filter(EXCEPTION_POINTERS *ep) {
	HANDLE f = CreateFileA(dump_name, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	MINIDUMP_EXCEPTION_INFORMATION mei = {GetCurrentThreadId(), ep, FALSE};
	MiniDumpWriteDump(GetCurrentProcess(), GetCurrentProcessId(), f, MiniDumpNormal, &mei, NULL, NULL);
	CloseHandle(f);
	ExitProcess(3);
	return EXCEPTION_EXECUTE_HANDLER;
}

volatile int *volatile target; /* always null */
volatile int sink;

extern "C" __declspec(dllimport) int lib_apply(volatile int *p, int n);

namespace geo {

class Shape {
public:
	explicit Shape(int id) : id_(id) {}
	virtual int area(volatile int *out) const;

protected:
	int id_;
};

class Square : public Shape {
public:
	Square(int id, int side) : Shape(id), side_(side) {}
	int area(volatile int *out) const override;

private:
	int side_;
};

NOINLINE int Shape::area(volatile int *out) const {
	return id_;
}

NOINLINE int Square::area(volatile int *out) const {
	*out = side_ * side_; /* the crash */
	return side_ * side_;
}

template <typename T> NOINLINE int total(T *const *items, int n, volatile int *out) {
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += items[i]->area(out);
	return sum;
}

class Registry {
public:
	Registry(Shape *a, Shape *b) {
		items_[0] = a;
		items_[1] = b;
	}
	NOINLINE int measure(volatile int *out);

private:
	Shape *items_[2];
};

int Registry::measure(volatile int *out) {
	int r = total<Shape>(items_, 2, out);
	sink = r;
	return r + 1;
}

} // namespace geo

NOINLINE int run_cpp(void) {
	geo::Shape plain(1);
	geo::Square square(2, 7);
	geo::Registry reg(&plain, &square);
	int r = reg.measure(target);
	sink = r;
	return r;
}

NOINLINE int run_dll(int n) {
	int r = lib_apply(target, n);
	sink = r;
	return r;
}

static volatile int stop, idle_running;

NOINLINE void idle_loop(void) {
	idle_running = 1;
	while (!stop)
		sink++;
}

static DWORD WINAPI idle_proc(LPVOID) {
	idle_loop();
	sink++;
	return 0;
}

NOINLINE void thread_crash(int n) {
	*target = n; /* the crash */
}

NOINLINE int thread_work(int n) {
	thread_crash(n * 2);
	sink = n;
	return n + 1;
}

static DWORD WINAPI crash_proc(LPVOID p) {
	int r = thread_work((int)(INT_PTR)p);
	sink = r;
	return 0;
}

NOINLINE void main_wait(void) {
	while (!stop)
		sink--;
}

NOINLINE int run_thread(void) {
	CreateThread(NULL, 0, idle_proc, NULL, 0, NULL);
	while (!idle_running)
		;
	CreateThread(NULL, 0, crash_proc, (LPVOID)5, 0, NULL);
	main_wait();
	sink = 1;
	return 0;
}

INLINE void level3(int n) {
	*target = n; /* the crash */
	sink = n;
}

INLINE void level2(int n) {
	level3(n + 3);
	sink = n;
}

INLINE void level1(int n) {
	level2(n * 2);
	sink = n;
}

NOINLINE int run_inline(int n) {
	level1(n + 1);
	sink = n;
	return n;
}

NOINLINE void align_leaf(volatile int *p, int n) {
	*p = n; /* the crash */
}

NOINLINE int aligned_work(int n) {
	alignas(64) volatile int block[16];
	for (int i = 0; i < 16; i++)
		block[i] = n + i;
	align_leaf(target, block[3]);
	sink = block[5];
	return block[7];
}

NOINLINE int run_align(int n) {
	int r = aligned_work(n + 1);
	sink = r;
	return r;
}

int main(int argc, char **argv) {
	if (argc > 2)
		dump_name = argv[2];
	SetUnhandledExceptionFilter(filter);
	const char *what = argc > 1 ? argv[1] : "";
	int r = 0;
	if (!strcmp(what, "cpp"))
		r = run_cpp();
	else if (!strcmp(what, "dll"))
		r = run_dll(argc);
	else if (!strcmp(what, "thread"))
		r = run_thread();
	else if (!strcmp(what, "inline"))
		r = run_inline(argc);
	else if (!strcmp(what, "align"))
		r = run_align(argc);
	sink = r;
	return 0;
}
