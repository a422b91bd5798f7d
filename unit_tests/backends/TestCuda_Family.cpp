#include <TestCuda_Category.hpp>
#include <TestFamily.hpp>
