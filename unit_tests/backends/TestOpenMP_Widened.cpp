#include <TestOpenMP_Category.hpp>
#include <TestWidened.hpp>
