// Ground truth for test_cxx_names.py (issue 35, item 1): C++ target
// constructs in a class template's method (two instantiations), a static
// function with reference and pointer parameters, and a lambda, built
// without -g. Each construct runs a known number of times; the program
// prints the results so that a wrong run shows.
//   OMPStream<double>::add   2 runs   (KERNEL:add)
//   OMPStream<float>::add    1 run    (KERNEL:add)
//   reductions(double&, double*) 3 runs (KERNEL:reductions)
//   main's lambda            1 run    (KERNEL:lambda)
#include <cstdio>

template <typename T> struct OMPStream {
    T a[64];
    void add()
    {
#pragma omp target map(tofrom : a) /* KERNEL:add */
        for (int i = 0; i < 64; i++)
            a[i] += 1;
    }
};

static double reductions(double &s, double *x)
{
#pragma omp target map(tofrom : s) map(to : x[0:8]) /* KERNEL:reductions */
    for (int i = 0; i < 8; i++)
        s += x[i];
    return s;
}

int main()
{
    OMPStream<double> d{};
    OMPStream<float> f{};
    d.add();
    d.add();
    f.add();
    double s = 0, x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int r = 0; r < 3; r++)
        reductions(s, x);
    auto bump = [&](int n) {
#pragma omp target map(tofrom : s) /* KERNEL:lambda */
        s += n;
    };
    bump(3);
    std::printf("cxx_names: %g %g %g\n", d.a[0], (double)f.a[0], s);
    return 0;
}
