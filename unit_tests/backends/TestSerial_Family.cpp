#include <TestSerial_Category.hpp>
#include <TestFamily.hpp>
