#include <TestCuda_Category.hpp>
#include <TestRobustness.hpp>
