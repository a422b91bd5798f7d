#include <TestCuda_Category.hpp>
#include <TestImpl.hpp>
