/*
 * cxx: crashes around C++ exceptions, for the walker's tests (see
 * generate.sh).
 *
 *   throw  an exception thrown three frames below main that nothing
 *          catches: __cxa_throw finds no handler and calls std::terminate,
 *          which aborts (the thrower's frames are still on the stack)
 *   catch  an exception caught in c1, whose catch block calls a function
 *          that writes through a null pointer
 *   dtor   an exception caught in c1 unwinds c2, whose local object's
 *          destructor writes through a null pointer (run from c2's
 *          landing pad)
 *   noexcept  an exception thrown below a noexcept function: the
 *          personality routine finds no call site for it in the noexcept
 *          frame and calls std::terminate itself, while the unwinder
 *          (_Unwind_RaiseException) and __cxa_throw are still on the stack
 */
#include <cstring>
#include <stdexcept>

volatile int *volatile bad;
volatile int sink;

struct Guard {
	int n;
	explicit Guard(int v) : n(v) { sink = v; }
	__attribute__((noinline)) ~Guard()
	{
		if (n > 100)
			*bad = n; /* the crash of dtor */
		sink = n;
	}
};

__attribute__((noinline)) void crash_in_handler(int n)
{
	*bad = n; /* the crash of catch */
	sink = n;
}

__attribute__((noinline)) int c3(int n)
{
	if (n > 0)
		throw std::runtime_error("c3");
	return n + sink;
}

__attribute__((noinline)) int c2(int n)
{
	Guard g(n);
	int r = c3(n + 1);
	sink = r;
	return r + 1;
}

__attribute__((noinline)) int c1(int n, bool catching)
{
	if (!catching)
		return c2(n + 1) + 1;
	try {
		return c2(n + 1) + 1;
	} catch (const std::exception &e) {
		crash_in_handler(n + (int)std::strlen(e.what()));
	}
	return 0;
}

__attribute__((noinline)) int ne1(int n) noexcept
{
	int r = c2(n + 1);
	sink = r;
	return r + 1;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "throw";
	int r;
	if (std::strcmp(m, "dtor") == 0)
		r = c1(200, true);
	else if (std::strcmp(m, "noexcept") == 0)
		r = ne1(argc);
	else
		r = c1(argc, std::strcmp(m, "catch") == 0);
	sink = r; /* no tail call: main stays on the stack */
	return 0;
}
