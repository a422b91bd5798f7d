#include <TestCuda_Category.hpp>
#include <TestDeterminism.hpp>
