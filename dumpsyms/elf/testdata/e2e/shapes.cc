// C++ names for dumpsyms' end-to-end test: namespaces, classes, methods,
// overloads and a template, as Breakpad composes them.
#include <cstdio>

namespace geo {
class Shape {
 public:
  explicit Shape(int sides) : sides_(sides) {}
  __attribute__((noinline)) int Perimeter(int side) const { return sides_ * side; }
  __attribute__((noinline)) static int Count(int n) { return n + 1; }

 private:
  int sides_;
};

template <typename T>
__attribute__((noinline)) T Twice(T v) {
  return v + v;
}

__attribute__((noinline)) int Area(int w, int h) { return w * h; }
__attribute__((noinline)) double Area(double r) { return 3.0 * r * r; }
}  // namespace geo

int main(int argc, char**) {
  geo::Shape s(argc + 2);
  std::printf("%d %d %d %f %d\n", s.Perimeter(argc), geo::Shape::Count(argc), geo::Area(argc, 2),
              geo::Area(1.5 * argc), geo::Twice(argc));
  return 0;
}
