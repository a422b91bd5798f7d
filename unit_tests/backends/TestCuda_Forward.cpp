#include <TestCuda_Category.hpp>
#include <TestForward.hpp>
