#include <TestOpenMP_Category.hpp>
#include <TestRobustness.hpp>
