#include <TestCuda_Category.hpp>
#include <TestWidened.hpp>
