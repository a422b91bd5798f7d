#include <TestCuda_Category.hpp>
#include <TestHalf.hpp>
