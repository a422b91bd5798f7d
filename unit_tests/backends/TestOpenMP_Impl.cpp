#include <TestOpenMP_Category.hpp>
#include <TestImpl.hpp>
