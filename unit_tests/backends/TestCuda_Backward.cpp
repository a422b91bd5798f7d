#include <TestCuda_Category.hpp>
#include <TestBackward.hpp>
