#include <TestCuda_Category.hpp>
#include <TestInputs.hpp>
