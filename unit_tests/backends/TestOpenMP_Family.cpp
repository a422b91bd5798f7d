#include <TestOpenMP_Category.hpp>
#include <TestFamily.hpp>
